package federate

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/dadil/dadil/dataset"
)

// start starts the atoms once the federation has formed. When the start
// (StartSummary) or the scaling (dataset.ScaleMinMax) needs them it
// gathers the sites' summaries, asked for in their welcome, for at most
// Config.RoundTimeout: a site whose summary does not arrive or does not
// check is left out of the scaling and of the atoms' start. It then sets
// the scaling, draws the atoms and sends every site the scaling.
func (c *coordinator) start(ctx context.Context, res *Result) error {
	sums := map[int]*summary{}
	if c.cfg.Scaling != dataset.ScaleNone || c.cfg.Start == StartSummary {
		sh := SummaryShape(c.shape.D, c.shape.C)
		var asked []int // the sites whose welcome asked for a summary
		for id, s := range c.sites {
			if c.cfg.Scaling != dataset.ScaleNone || s.Role == RoleSource {
				asked = append(asked, id)
			}
		}
		got, tr, err := c.gather(ctx, KindSummary, 0, asked, sh)
		if err != nil {
			return err
		}
		res.SummaryBytes = tr.in
		for id := range c.sites {
			if m := got[id]; m != nil {
				s := &summary{data: m.Data, d: sh.D, c: c.shape.C}
				if err := s.check(); err != nil {
					c.cfg.Log("site %s: rejected its summary: %v", c.sites[id].Name, err)
					continue
				}
				sums[id] = s
				res.Summarized = append(res.Summarized, id)
			}
		}
		c.cfg.Log("summaries from %d of %d sites (%d bytes)", len(sums), len(c.sites), tr.in)
	}
	if c.cfg.Scaling == dataset.ScaleMinMax {
		var all []summary
		for _, id := range res.Summarized {
			all = append(all, *sums[id])
		}
		sc, err := scalerOf(all)
		if err != nil {
			return err
		}
		c.scaler, res.Scaler = sc, sc
	}
	rng := rand.New(rand.NewPCG(c.cfg.Seed, 0x1417))
	if c.cfg.Start == StartGaussian {
		gaussianAtoms(c.atoms, c.shape, rng)
	} else {
		var srcs []*summary
		for id, s := range c.sites {
			if s.Role == RoleSource {
				srcs = append(srcs, sums[id])
			}
		}
		if missing := drawAtoms(c.atoms, c.shape, srcs, c.scaler, rng); len(missing) > 0 {
			c.cfg.Log("no source summarised the classes %v: their points start from N(0, I)", missing)
		}
	}
	c.started = true
	res.Start, _ = Unpack(slices.Clone(c.atoms), c.shape) // the shape is c.atoms'
	if c.scaler != nil {
		for id := range c.sites {
			c.sendScale(id)
		}
		if err := c.nc.Flush(); err != nil {
			c.cfg.Log("scaling: %v", err)
		}
	}
	return nil
}

// sendScale sends the federation's scaling to site id.
func (c *coordinator) sendScale(id int) {
	sh := ScaleShape(c.shape.D)
	data := slices.Concat(c.scaler.Offset, c.scaler.Scale, make([]float64, 2))
	if _, err := c.sendMessage(id, &Message{Kind: KindScale, Client: uint32(id), Shape: sh, Data: data}); err != nil {
		c.cfg.Log("scaling to site %s: %v", c.sites[id].Name, err)
	}
}

// gaussianAtoms draws the atoms (data, of shape sh) from N(0, I) with
// balanced one-hot label logits (paper Algorithm 2, line 1).
func gaussianAtoms(data []float64, sh Shape, rng *rand.Rand) {
	atoms, _ := Unpack(data, sh)
	for _, a := range atoms {
		raw := a.X.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
		a.Logits.Zero()
		for i := range sh.N {
			a.Logits.Set(i, i%sh.C, 1)
		}
	}
}
