package bench

import "github.com/dadil/dadil/adapt"

// baselineFamilies returns the shallow baselines of the paper's Tables 2
// and 3, between source-only and the dictionary methods, each with the
// settings documented on its type. JCPOT classifies with the transport
// rule (sources mapped onto the target through its couplings, classifier
// on the mapped sources) at ε = 0.1 of the largest cost, the usual way
// its couplings are used for classification.
func baselineFamilies() []family {
	return []family{
		single("sa", func(uint64) adapt.Method { return &adapt.SA{} }),
		single("tca", func(uint64) adapt.Method { return &adapt.TCA{} }),
		single("otda-emd", func(uint64) adapt.Method { return adapt.NewOTDAEMD() }),
		single("otda-sinkhorn", func(uint64) adapt.Method { return adapt.NewOTDASinkhorn() }),
		single("jcpot", func(uint64) adapt.Method { return &adapt.JCPOT{Map: true, Reg: 0.1} }),
		single("wb", func(seed uint64) adapt.Method { return &adapt.WB{Bary: adapt.BarycenterSettings{Seed: seed}} }),
		single("wbt-reg", func(seed uint64) adapt.Method { return &adapt.WBT{Bary: adapt.BarycenterSettings{Seed: seed}} }),
		single("wjdot", func(seed uint64) adapt.Method { return &adapt.WJDOT{Seed: seed} }),
	}
}
