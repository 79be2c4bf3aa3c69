package signal

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestMelScale(t *testing.T) {
	for _, tc := range []struct {
		scale   MelScale
		hz, mel float64
	}{
		{HTK, 0, 0},
		{HTK, 700, 2595 * math.Log10(2)},
		{HTK, 6300, 2595}, // 1 + 6300/700 = 10
		{Slaney, 0, 0},
		{Slaney, 500, 7.5},
		{Slaney, 1000, 15},
		{Slaney, 6400, 42}, // 27 mel per factor 6.4 above 1 kHz
		{Slaney, 1000 * 6.4 * 6.4, 69},
	} {
		if got := tc.scale.Mel(tc.hz); math.Abs(got-tc.mel) > 1e-9 {
			t.Errorf("%v.Mel(%v) = %v, want %v", tc.scale, tc.hz, got, tc.mel)
		}
		if got := tc.scale.Hz(tc.mel); math.Abs(got-tc.hz) > 1e-9*max(1, tc.hz) {
			t.Errorf("%v.Hz(%v) = %v, want %v", tc.scale, tc.mel, got, tc.hz)
		}
	}
	// HTK's anchor: 1000 Hz is about 1000 mel.
	if m := HTK.Mel(1000); math.Abs(m-1000) > 0.1 {
		t.Errorf("HTK.Mel(1000) = %v, want ≈ 1000", m)
	}
	for _, s := range []MelScale{HTK, Slaney} {
		prev := -1.0
		for _, f := range []float64{1, 55, 440, 999.9, 1000, 1000.1, 3000, 22050, 96000} {
			m := s.Mel(f)
			if m <= prev {
				t.Errorf("%v: Mel(%v) = %v is not above the previous frequency's %v", s, f, m, prev)
			}
			prev = m
			if got := s.Hz(m); math.Abs(got-f) > 1e-9*f {
				t.Errorf("%v: Hz(Mel(%v)) = %v", s, f, got)
			}
		}
		if p, err := ParseMelScale(s.String()); err != nil || p != s {
			t.Errorf("ParseMelScale(%q) = %v, %v", s.String(), p, err)
		}
	}
	if _, err := ParseMelScale("mel"); err == nil || !strings.Contains(err.Error(), `unknown mel scale "mel" (want htk or slaney)`) {
		t.Errorf("ParseMelScale(mel): %v", err)
	}
}

// TestMelFiltersTorchaudio compares the filters with those of torchaudio
// 0.13 (torchaudio.functional.melscale_fbanks(17, fmin, fmax, bands,
// 16000, norm, mel_scale), transposed; computed in float32, hence the
// tolerance).
func TestMelFiltersTorchaudio(t *testing.T) {
	for _, tc := range []struct {
		bands    int
		min, max float64
		scale    MelScale
		norm     bool
		want     [][]float64 // nonzero weights, from coefficient first[b]
		first    []int
	}{
		{4, 0, 8000, HTK, false, [][]float64{
			{0.94565087556838989, 0.28719216585159302},
			{0.05434912815690041, 0.71280783414840698, 0.77571427822113037, 0.37793299555778503},
			{0.22428570687770844, 0.62206697463989258, 0.98800945281982422, 0.74770593643188477, 0.50740236043930054, 0.26709881424903870, 0.02679525502026081},
			{0.01199053693562746, 0.25229409337043762, 0.49259763956069946, 0.73290121555328369, 0.97320473194122314, 0.87101763486862183, 0.72584795951843262, 0.58067834377288818, 0.43550866842269897, 0.29033902287483215, 0.14516936242580414},
		}, []int{1, 1, 3, 5}},
		{3, 300, 6000, HTK, false, [][]float64{
			{0.32848194241523743, 0.90696120262145996, 0.39653548598289490},
			{0.09303879737854004, 0.60346454381942749, 0.92921066284179688, 0.61195164918899536, 0.29469269514083862},
			{0.07078933715820312, 0.38804832100868225, 0.70530730485916138, 0.98597377538681030, 0.78877902030944824, 0.59158426523208618, 0.39438951015472412, 0.19719475507736206},
		}, []int{1, 2, 4}},
		// norm="slaney", mel_scale="slaney": librosa's defaults.
		{4, 0, 8000, Slaney, true, [][]float64{
			{1.33960030507296324e-03, 6.05095585342496634e-04},
			{7.35213689040392637e-04, 8.86148016434162855e-04, 3.35861521307379007e-04},
			{1.60902534844353795e-04, 4.67264151666313410e-04, 5.90167939662933350e-04, 4.25715232267975807e-04, 2.61262524873018265e-04, 9.68098102021031082e-05},
			{3.43980682373512536e-05, 1.22675060993060470e-04, 2.10952057386748493e-04, 2.99229053780436516e-04, 3.31704795826226473e-04, 2.84318375634029508e-04, 2.36931926338002086e-04, 1.89545506145805120e-04, 1.42159085953608155e-04, 9.47726584854535758e-05, 4.73862419312354177e-05},
		}, []int{1, 2, 3, 5}},
		{3, 300, 6000, Slaney, false, [][]float64{
			{0.32821607589721680, 0.88640636205673218, 0.25982353091239929},
			{0.11359361559152603, 0.74017643928527832, 0.80401271581649780, 0.46918201446533203, 0.13435131311416626},
			{0.19598729908466339, 0.53081798553466797, 0.86564868688583374, 0.89305669069290161, 0.71444535255432129, 0.53583401441574097, 0.35722267627716064, 0.17861133813858032},
		}, []int{1, 2, 4}},
	} {
		H, err := MelFilters(tc.bands, 32, Mel{Rate: 16000, Min: tc.min, Max: tc.max, Scale: tc.scale, Normalize: tc.norm})
		if err != nil {
			t.Fatal(err)
		}
		if r, c := H.Dims(); r != tc.bands || c != 17 {
			t.Fatalf("filters %d×%d, want %d×17", r, c, tc.bands)
		}
		for b := range tc.bands {
			top := slices.Max(tc.want[b]) // float32 rounding, relative to the band
			for k := range 17 {
				want := 0.0
				if i := k - tc.first[b]; i >= 0 && i < len(tc.want[b]) {
					want = tc.want[b][i]
				}
				if got := H.At(b, k); math.Abs(got-want) > 2e-6*top {
					t.Errorf("%v %v–%v Hz: H[%d][%d] = %v, torchaudio %v", tc.scale, tc.min, tc.max, b, k, got, want)
				}
			}
		}
	}
}

// TestMelFiltersTriangles checks what the triangular filters are by
// construction, on configurations of several sizes and rates: weights in
// [0, 1] that are nonzero only strictly between a band's outer edges,
// overlapping triangles that sum to 1 between the first and the last
// centre, and weight 1 on a coefficient that falls on a centre.
func TestMelFiltersTriangles(t *testing.T) {
	for _, tc := range []struct {
		bands, window int
		mel           Mel
	}{
		{40, 1024, Mel{Rate: 16000}},
		{64, 2048, Mel{Rate: 44100, Min: 20, Max: 20000}},
		{128, 4096, Mel{Rate: 48000}},
		{26, 512, Mel{Rate: 8000, Min: 300, Max: 3700}},
		{32, 4096, Mel{Rate: 12000}},
		{1, 16, Mel{Rate: 1000}},
		{128, 2048, Mel{Rate: 22050, Scale: Slaney}},
		{40, 1024, Mel{Rate: 16000, Min: 500, Max: 7600, Scale: Slaney}},
	} {
		H, err := MelFilters(tc.bands, tc.window, tc.mel)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		f := tc.mel.Edges(tc.bands)
		step := tc.mel.Rate / float64(tc.window)
		for k := 0; k <= tc.window/2; k++ {
			fk := float64(k) * step
			var sum float64
			for b := range tc.bands {
				h := H.At(b, k)
				if h < 0 || h > 1 {
					t.Fatalf("%+v: H[%d][%d] = %v", tc, b, k, h)
				}
				if h > 0 && (fk <= f[b] || fk >= f[b+2]) {
					t.Fatalf("%+v: band %d weighs %v Hz outside (%v, %v)", tc, b, fk, f[b], f[b+2])
				}
				if math.Abs(fk-f[b+1]) < 1e-9 && math.Abs(h-1) > 1e-9 {
					t.Fatalf("%+v: band %d weighs its centre %v Hz by %v", tc, b, fk, h)
				}
				sum += h
			}
			if fk >= f[1] && fk <= f[tc.bands] && math.Abs(sum-1) > 1e-9 {
				t.Fatalf("%+v: the weights of %v Hz sum to %v, want 1", tc, fk, sum)
			}
		}
	}
}

// TestMelEnergiesOfCosine: a cosine of amplitude A at coefficient k0 has
// |X_k0|² = (A·N/2)² and nothing elsewhere, so band b's energy is
// H_b(f_k0)·(A·N/2)²; in decibels 20·log10(A·N/2) at the coefficient and the
// −100 dB floor elsewhere.
func TestMelEnergiesOfCosine(t *testing.T) {
	const n, k0, amp, rate = 512, 37, 0.25, 16000.0
	x := make([]float64, n)
	for i := range x {
		x[i] = amp * math.Cos(2*math.Pi*k0*float64(i)/n+1)
	}
	m := Mel{Rate: rate, Min: 100}
	H, err := MelFilters(20, n, m)
	if err != nil {
		t.Fatal(err)
	}
	peak := amp * n / 2
	s, err := NewSpectrum(n, 20, &Settings{Mel: &m})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Magnitudes(nil, x)
	lit := 0
	for b, e := range got {
		want := H.At(b, k0) * peak * peak
		if math.Abs(e-want) > 1e-9*peak*peak {
			t.Errorf("band %d: energy %v, want %v", b, e, want)
		}
		if want > 0 {
			lit++
		}
	}
	if lit != 2 {
		t.Errorf("%d bands hold the tone, want the 2 around it", lit)
	}
	for _, set := range []*Settings{{Mel: &m, Log: true}, {Mel: &m, Decibels: true}} {
		s, err := NewSpectrum(n, 20, set)
		if err != nil {
			t.Fatal(err)
		}
		for b, v := range s.Magnitudes(nil, x) {
			want := math.Log1p(got[b])
			if set.Decibels {
				want = 10 * math.Log10(max(got[b], 1e-10))
			}
			if math.Abs(v-want) > 1e-9 {
				t.Errorf("%+v band %d: %v, want %v", *set, b, v, want)
			}
		}
	}
	// Decibels of the magnitudes themselves.
	s, err = NewSpectrum(n, n/2+1, &Settings{Decibels: true})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range s.Magnitudes(nil, x) {
		want := -100.0
		if k == k0 {
			want = 20 * math.Log10(peak)
		}
		if math.Abs(v-want) > 1e-9 {
			t.Errorf("coefficient %d: %v dB, want %v", k, v, want)
		}
	}
}

func TestMelErrors(t *testing.T) {
	for _, tc := range []struct {
		name          string
		bands, window int
		set           Settings
		msg           string
	}{
		{"window too long", 4, 1 << 40, Settings{}, "window of 1099511627776 samples (want 2 … 16777216)"},
		{"no bands", 0, 1024, Settings{Mel: &Mel{Rate: 16000}}, "0 mel bands for a window of 1024 samples (want 1 … 513"},
		{"more bands than coefficients", 1 << 40, 1024, Settings{Mel: &Mel{Rate: 16000}}, "1099511627776 mel bands for a window of 1024 samples (want 1 … 513"},
		{"no rate", 40, 1024, Settings{Mel: &Mel{}}, "need the sampling rate"},
		{"NaN rate", 40, 1024, Settings{Mel: &Mel{Rate: math.NaN()}}, "need the sampling rate"},
		{"infinite rate", 40, 1024, Settings{Mel: &Mel{Rate: math.Inf(1)}}, "need the sampling rate"},
		{"above Nyquist", 40, 1024, Settings{Mel: &Mel{Rate: 16000, Max: 9000}}, "above the Nyquist frequency 8000 Hz"},
		{"min above max", 40, 1024, Settings{Mel: &Mel{Rate: 16000, Min: 5000, Max: 4000}}, "want min < max"},
		{"min at Nyquist", 40, 1024, Settings{Mel: &Mel{Rate: 16000, Min: 8000}}, "want min < max"},
		{"negative min", 40, 1024, Settings{Mel: &Mel{Rate: 16000, Min: -1}}, "want 0 ≤ min < max"},
		{"NaN max", 40, 1024, Settings{Mel: &Mel{Rate: 16000, Max: math.NaN()}}, "want 0 ≤ min < max"},
		{"too many bands", 128, 256, Settings{Mel: &Mel{Rate: 16000}}, "holds no Fourier coefficient"},
		{"log and decibels", 40, 1024, Settings{Log: true, Decibels: true}, "exclude each other"},
		{"unknown scale", 40, 1024, Settings{Mel: &Mel{Rate: 16000, Scale: 7}}, "unknown mel scale MelScale(7)"},
	} {
		_, err := NewSpectrum(tc.window, tc.bands, &tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "signal: ") {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.msg)
		}
	}
	if _, err := MelFilters(40, 1, Mel{Rate: 16000}); err == nil {
		t.Error("MelFilters accepted a window of 1 sample")
	}
}

// TestMelTorchaudio cross-checks Features with Settings.Mel and Decibels
// against torchaudio's MelSpectrogram and AmplitudeToDB (frames not
// centred, periodic Hann window, power 2, HTK bands without norm) when
// /usr/bin/python3 has torchaudio (Debian's python3-torchaudio).
func TestMelTorchaudio(t *testing.T) {
	const python = "/usr/bin/python3"
	if testing.Short() {
		t.Skip("skipping the torchaudio cross-check in short mode")
	}
	if out, err := exec.Command(python, "-c", "import torchaudio").CombinedOutput(); err != nil {
		t.Skipf("skipping the torchaudio cross-check: %s cannot import torchaudio (%v: %s)", python, err, lastLine(out))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 6000)
	for i := range x {
		x[i] = 0.3*math.Sin(2*math.Pi*440*float64(i)/22050) + 0.05*rng.NormFloat64()
	}
	const window, hop, bands, rate, fmin, fmax = 1024, 512, 48, 22050, 30.0, 10000.0
	script := `
import json, sys, torch, torchaudio
a = json.load(sys.stdin)
x = torch.tensor(a["x"], dtype=torch.float64)
out = {}
for scale, norm in [("htk", None), ("slaney", "slaney")]:
    ms = torchaudio.transforms.MelSpectrogram(sample_rate=a["rate"], n_fft=a["window"], hop_length=a["hop"],
        f_min=a["fmin"], f_max=a["fmax"], n_mels=a["bands"], center=False, power=2.0,
        norm=norm, mel_scale=scale).to(torch.float64)
    S = ms(x)
    D = torchaudio.transforms.AmplitudeToDB(stype="power")(S)
    out[scale] = {"power": S.T.tolist(), "db": D.T.tolist()}
json.dump(out, sys.stdout)
`
	in, _ := json.Marshal(map[string]any{"x": x, "rate": rate, "window": window, "hop": hop, "fmin": fmin, "fmax": fmax, "bands": bands})
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var res map[string]struct{ Power, DB [][]float64 }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	starts, err := SlidingStarts(len(x), window, hop, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		db  bool
		mel *Mel
	}{
		{false, &Mel{Rate: rate, Min: fmin, Max: fmax}},
		{true, &Mel{Rate: rate, Min: fmin, Max: fmax}},
		{false, &Mel{Rate: rate, Min: fmin, Max: fmax, Scale: Slaney, Normalize: true}},
		{true, &Mel{Rate: rate, Min: fmin, Max: fmax, Scale: Slaney, Normalize: true}},
	} {
		db, mel := c.db, c.mel
		want := res[mel.Scale.String()]
		if len(want.Power) != len(starts) {
			t.Fatalf("torchaudio has %d frames, SlidingStarts %d", len(want.Power), len(starts))
		}
		F, err := Features(x, starts, window, bands, &Settings{Taper: Hann, Mel: mel, Decibels: db})
		if err != nil {
			t.Fatal(err)
		}
		ref := want.Power
		if db {
			ref = want.DB
		}
		for i := range starts {
			// torchaudio computes its filters in float32, so a weight can
			// be off by ~1e-7–1e-6 of the band's largest: the error of an
			// energy is bounded by a small multiple of that relative to
			// the frame's largest band energy.
			var top float64
			for _, v := range want.Power[i] {
				top = max(top, v)
			}
			for b := range bands {
				got, w := F.At(i, b), ref[i][b]
				const rel = 3e-6
				tol := rel * top
				if db {
					// The same in decibels: 10·log10(1 + tol/w).
					tol = 10 * math.Log10(1+rel*top/max(want.Power[i][b], 1e-10))
				}
				if math.Abs(got-w) > tol {
					t.Fatalf("%+v, decibels %v, frame %d band %d: %v, torchaudio %v", *mel, db, i, b, got, w)
				}
			}
		}
	}
}

// lastLine returns the last line of a command's output, for skip messages.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strconv.Quote(lines[len(lines)-1])
}

// FuzzMelFilters checks that any band settings give either an error or
// filters with finite weights, each band weighing at least one coefficient,
// within [0, 1] unless normalised (then within [0, 2/width]).
func FuzzMelFilters(f *testing.F) {
	f.Add(40, 1024, 16000.0, 0.0, 0.0, false, false)
	f.Add(128, 2048, 22050.0, 20.0, 11025.0, true, true)
	f.Add(4, 16, 100.0, 40.0, 50.0, false, false)
	f.Fuzz(func(t *testing.T, bands, window int, rate, lo, hi float64, slaney, norm bool) {
		window = min(max(window, -1), 1<<14) // the allocation is the caller's choice
		m := Mel{Rate: rate, Min: lo, Max: hi, Normalize: norm}
		if slaney {
			m.Scale = Slaney
		}
		H, err := MelFilters(bands, window, m)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "signal: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		f := m.Edges(bands)
		for b := range bands {
			limit := 1.0
			if norm {
				limit = 2 / (f[b+2] - f[b])
			}
			var any bool
			for _, h := range H.RawRowView(b) {
				if math.IsNaN(h) || h < 0 || h > limit*(1+1e-12) {
					t.Fatalf("%+v, %d bands, window %d: band %d weight %v (limit %v)", m, bands, window, b, h, limit)
				}
				any = any || h > 0
			}
			if !any {
				t.Fatalf("%+v, %d bands, window %d: band %d weighs nothing", m, bands, window, b)
			}
		}
	})
}
