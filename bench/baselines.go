package bench

// baselineNames are the shallow baselines of the paper's Tables 2 and 3,
// between source-only and the dictionary methods, each built by adapt.New
// with the settings documented there.
var baselineNames = []string{"sa", "tca", "otda-emd", "otda-sinkhorn", "jcpot", "wb", "wbt-reg", "wjdot"}

// baselineFamilies returns the families of the baselines.
func baselineFamilies() []family {
	var fams []family
	for _, name := range baselineNames {
		fams = append(fams, named(name))
	}
	return fams
}
