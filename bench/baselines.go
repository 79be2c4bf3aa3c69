package bench

// baselineFamilies returns the shallow baselines of the paper's Table 2
// and 3, between source-only and the dictionary methods.
func baselineFamilies() []family {
	return nil
}
