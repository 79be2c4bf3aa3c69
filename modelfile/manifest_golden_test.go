package modelfile

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
)

// TestCheckManifestGolden pins checkManifest's verdict on a table of
// manifests, each a valid one with one change, to testdata/manifest.golden:
// the error, or the model, classifier and decoded settings it leaves.
func TestCheckManifestGolden(t *testing.T) {
	var b strings.Builder
	dadil := func() manifest {
		return manifest{Format: Format, Version: versionDaDiL, Labels: []int{4, 7, 9}, Features: 5, Atoms: 3,
			Classes: 3, Domains: []string{"s1", "s2", "t"}, Target: 2}
	}
	gmm := func() manifest {
		m := dadil()
		m.Version, m.Model, m.Components = versionGMMEnsemble, modelGMM, 2
		m.RawSettings = json.RawMessage(`{"target_components": 2, "samples_per_class": 5, "seed": 7}`)
		return m
	}
	for _, tc := range []struct {
		name   string
		base   func() manifest
		change func(*manifest)
	}{
		{"dadil", dadil, func(*manifest) {}},
		{"dadil settings", dadil, func(m *manifest) { m.RawSettings = json.RawMessage(`{"atoms": 4, "shared_atom_batch": false}`) }},
		{"bad settings", dadil, func(m *manifest) { m.RawSettings = json.RawMessage(`[1]`) }},
		{"format", dadil, func(m *manifest) { m.Format = "zip" }},
		{"newer", dadil, func(m *manifest) { m.Version = Version + 1 }},
		{"version 0", dadil, func(m *manifest) { m.Version = 0 }},
		{"explicit dadil", dadil, func(m *manifest) { m.Model = modelDaDiL }},
		{"components in dadil", dadil, func(m *manifest) { m.Components = 2 }},
		{"gmm directions", gmm, func(m *manifest) { m.Version, m.Directions = versionGMMProjection, 3 }},
		{"gmm directions in version 3", gmm, func(m *manifest) { m.Directions = 3 }},
		{"gmm as many directions as features", gmm, func(m *manifest) { m.Version, m.Directions = versionGMMProjection, 5 }},
		{"directions in dadil", dadil, func(m *manifest) { m.Version, m.Directions = versionGMMProjection, 3 }},
		{"unknown model", dadil, func(m *manifest) { m.Model = "svm" }},
		{"gmm", gmm, func(*manifest) {}},
		{"gmm version 2", gmm, func(m *manifest) { m.Version = versionGMM }},
		{"gmm in version 1", gmm, func(m *manifest) { m.Version = versionDaDiL }},
		{"gmm components 0", gmm, func(m *manifest) { m.Components = 0 }},
		{"gmm components too many", gmm, func(m *manifest) { m.Components = maxComponents + 1 }},
		{"gmm target not last", gmm, func(m *manifest) { m.Target = 1 }},
		{"gmm one domain", gmm, func(m *manifest) { m.Domains, m.Target = []string{"t"}, 0 }},
		{"gmm no settings", gmm, func(m *manifest) { m.RawSettings = nil }},
		{"gmm bad settings", gmm, func(m *manifest) { m.RawSettings = json.RawMessage(`{"seed": -1}`) }},
		{"gmm negative settings", gmm, func(m *manifest) { m.RawSettings = json.RawMessage(`{"samples_per_class": -1}`) }},
		{"no atoms", dadil, func(m *manifest) { m.Atoms = 0 }},
		{"no classes", dadil, func(m *manifest) { m.Classes = 0 }},
		{"no features", dadil, func(m *manifest) { m.Features = 0 }},
		{"no domains", dadil, func(m *manifest) { m.Domains = nil }},
		{"target negative", dadil, func(m *manifest) { m.Target = -1 }},
		{"target outside", dadil, func(m *manifest) { m.Target = 3 }},
		{"labels", dadil, func(m *manifest) { m.Labels = []int{1, 2} }},
		{"names", dadil, func(m *manifest) { m.Names = []string{"a"} }},
		{"names ok", dadil, func(m *manifest) { m.Names = []string{"a", "b", "c", "d", "e"} }},
		{"atoms too many", dadil, func(m *manifest) { m.Atoms = maxAtoms + 1 }},
		{"classes too many", dadil, func(m *manifest) { m.Classes, m.Labels = maxClasses+1, make([]int, maxClasses+1) }},
		{"features too many", dadil, func(m *manifest) { m.Features = maxFeatures + 1 }},
		{"raw features", dadil, func(m *manifest) { m.RawFeatures = 7 }},
		{"raw features too few", dadil, func(m *manifest) { m.RawFeatures = 4 }},
		{"raw features too many", dadil, func(m *manifest) { m.RawFeatures = maxFeatures + 1 }},
		{"label twice", dadil, func(m *manifest) { m.Labels = []int{4, 7, 4} }},
		{"knn", dadil, func(m *manifest) { m.Classifier = kindKNN }},
		{"unknown classifier", dadil, func(m *manifest) { m.Classifier = "tree" }},
		{"hidden for softmax", dadil, func(m *manifest) { m.Hidden = map[string][]int{"r": {3}} }},
		{"mlp", dadil, func(m *manifest) {
			m.Classifier, m.Hidden = kindMLP, map[string][]int{"r": {8, 4}, "e0": {}, "e1": {2}, "e2": {1}}
		}},
		{"mlp one class", dadil, func(m *manifest) { m.Classifier, m.Classes, m.Labels = kindMLP, 1, []int{3} }},
		{"mlp hidden count", dadil, func(m *manifest) { m.Classifier, m.Hidden = kindMLP, map[string][]int{"r": {8}} }},
		{"mlp gmm v2 hidden count", gmm, func(m *manifest) {
			m.Version, m.Classifier, m.Hidden = versionGMM, kindMLP, map[string][]int{"r": {8}, "e0": {1}}
		}},
		{"mlp gmm v2", gmm, func(m *manifest) { m.Version, m.Classifier, m.Hidden = versionGMM, kindMLP, map[string][]int{"r": {8}} }},
		{"mlp missing entry", dadil, func(m *manifest) {
			m.Classifier, m.Hidden = kindMLP, map[string][]int{"r": {8}, "e0": {}, "e1": {2}, "e9": {1}}
		}},
		{"mlp too deep", dadil, func(m *manifest) {
			m.Classifier, m.Hidden = kindMLP, map[string][]int{"r": make([]int, maxHiddenLayers+1), "e0": {}, "e1": {2}, "e2": {1}}
		}},
		{"mlp width 0", dadil, func(m *manifest) {
			m.Classifier, m.Hidden = kindMLP, map[string][]int{"r": {8}, "e0": {}, "e1": {0}, "e2": {1}}
		}},
		{"mlp width too big", dadil, func(m *manifest) {
			m.Classifier, m.Hidden = kindMLP, map[string][]int{"r": {8}, "e0": {}, "e1": {2}, "e2": {maxFeatures + 1}}
		}},
	} {
		m := tc.base()
		tc.change(&m)
		if err := checkManifest(&m); err != nil {
			fmt.Fprintf(&b, "%s: error: %v\n", tc.name, err)
			continue
		}
		s, err := json.Marshal(m.Settings)
		if err != nil {
			t.Fatal(err)
		}
		g, err := json.Marshal(m.GMM)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: model %s, classifier %s\nsettings %s\ngmm %s\n", tc.name, m.Model, m.Classifier, s, g)
	}
	golden.Check(t, "manifest.golden", b.String())
}
