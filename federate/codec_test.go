package federate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// testMessage returns a message of shape s with distinct values.
func testMessage(s Shape) *Message {
	v, _ := s.Values()
	m := &Message{Kind: KindUpdate, Round: 7, Client: 3, Shape: s, Aux: math.Float64bits(0.25), Data: make([]float64, v)}
	for i := range m.Data {
		m.Data[i] = float64(i) - 0.5
	}
	return m
}

// assemble parses and assembles frames (in the given order) into one
// message.
func assemble(t *testing.T, frames [][]byte, want *Message) *Message {
	t.Helper()
	a := NewAssembler(want.Kind, want.Round, want.Client, want.Shape)
	for i, f := range frames {
		h, data, err := ParseFrame(f)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		done, err := a.Add(h, data)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if done != (i == len(frames)-1) {
			t.Fatalf("frame %d of %d: complete = %v", i, len(frames), done)
		}
	}
	return a.Message()
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		shape      Shape
		maxPayload int
		chunks     int
	}{
		{Shape{1, 1, 1, 1}, 1 << 20, 1},
		{Shape{3, 30, 2, 3}, 1 << 20, 1},
		{Shape{3, 30, 2, 3}, HeaderSize + 8, 450},
		{Shape{3, 30, 2, 3}, HeaderSize + 8*100, 5},
		{Shape{2, 7, 5, 3}, HeaderSize + 8*9 + 7, 13}, // 112 values, 9 per frame at most
	} {
		m := testMessage(c.shape)
		frames, err := Encode(m, c.maxPayload)
		if err != nil {
			t.Fatal(err)
		}
		if len(frames) != c.chunks {
			t.Errorf("%v in %d-byte frames: %d chunks, want %d", c.shape, c.maxPayload, len(frames), c.chunks)
		}
		for _, f := range frames {
			if len(f) > c.maxPayload {
				t.Errorf("frame of %d bytes above %d", len(f), c.maxPayload)
			}
		}
		// Any arrival order gives the same message.
		rng := rand.New(rand.NewPCG(1, uint64(len(frames))))
		rng.Shuffle(len(frames), func(i, j int) { frames[i], frames[j] = frames[j], frames[i] })
		got := assemble(t, frames, m)
		if got.Aux != m.Aux || got.Shape != m.Shape || got.Round != m.Round {
			t.Errorf("header %+v, want %+v", got, m)
		}
		for i, x := range got.Data {
			if x != m.Data[i] {
				t.Fatalf("value %d: %g, want %g", i, x, m.Data[i])
			}
		}
	}
}

func TestPackUnpack(t *testing.T) {
	s := Shape{3, 4, 2, 3}
	m := testMessage(s)
	atoms, err := Unpack(m.Data, s)
	if err != nil {
		t.Fatal(err)
	}
	if atoms[1].X.At(0, 0) != float64(s.N*(s.D+s.C))-0.5 || atoms[0].Logits.At(0, 0) != float64(s.N*s.D)-0.5 {
		t.Error("atoms out of the frame format's order")
	}
	data, s2, err := Pack(atoms)
	if err != nil || s2 != s {
		t.Fatal(s2, err)
	}
	for i := range data {
		if data[i] != m.Data[i] {
			t.Fatalf("value %d changed", i)
		}
	}
	if _, err := Unpack(m.Data[1:], s); err == nil {
		t.Error("Unpack accepted too few values")
	}
}

func TestParseFrameErrors(t *testing.T) {
	m := testMessage(Shape{2, 3, 2, 2})
	frames, err := Encode(m, HeaderSize+8*10)
	if err != nil {
		t.Fatal(err)
	}
	f := frames[0]
	edit := func(fn func(b []byte)) []byte {
		b := append([]byte(nil), f...)
		fn(b)
		return b
	}
	le := binary.LittleEndian
	for _, c := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"empty", nil, "shorter than"},
		{"truncated header", f[:HeaderSize-1], "shorter than"},
		{"truncated data", f[:len(f)-3], "holds 61 bytes, want 64"},
		{"extra data", append(append([]byte(nil), f...), 0, 0, 0, 0, 0, 0, 0, 0), "holds 72 bytes, want 64"},
		{"magic", edit(func(b []byte) { b[0] = 'X' }), "bad magic"},
		{"version", edit(func(b []byte) { le.PutUint16(b[4:], Version+1) }), fmt.Sprintf("unsupported message version %d", Version+1)},
		{"kind", edit(func(b []byte) { b[6] = 9 }), "unknown kind"},
		{"reserved", edit(func(b []byte) { b[7] = 1 }), "reserved"},
		{"zero size", edit(func(b []byte) { le.PutUint32(b[24:], 0) }), "must be positive"},
		{"oversized", edit(func(b []byte) { le.PutUint32(b[16:], 1<<31); le.PutUint32(b[20:], 1<<31) }), "more than"},
		{"oversized features", edit(func(b []byte) { le.PutUint32(b[24:], math.MaxUint32) }), "more than"},
		{"no chunks", edit(func(b []byte) { le.PutUint32(b[36:], 0) }), "chunk 0 of 0"},
		{"chunk index", edit(func(b []byte) { le.PutUint32(b[32:], 3) }), "chunk 3 of 3"},
		{"offset", edit(func(b []byte) { le.PutUint64(b[40:], 5) }), "starts at value 5"},
	} {
		_, _, err := ParseFrame(c.frame)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
	if _, _, err := ParseFrame(edit(func(b []byte) { le.PutUint16(b[4:], Version+1) })); !errors.Is(err, ErrVersion) {
		t.Errorf("a wrong version is %v, want ErrVersion", err)
	}
}

func TestAssemblerErrors(t *testing.T) {
	s := Shape{2, 3, 2, 2}
	m := testMessage(s)
	frames, _ := Encode(m, HeaderSize+8*10)
	add := func(a *Assembler, f []byte) error {
		h, data, err := ParseFrame(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Add(h, data)
		return err
	}
	for _, c := range []struct {
		name string
		a    *Assembler
	}{
		{"kind", NewAssembler(KindRound, 7, 3, s)},
		{"round", NewAssembler(KindUpdate, 6, 3, s)},
		{"client", NewAssembler(KindUpdate, 7, 2, s)},
		{"shape", NewAssembler(KindUpdate, 7, 3, Shape{2, 3, 2, 3})},
	} {
		if err := add(c.a, frames[0]); err == nil {
			t.Errorf("%s: a frame of another message was accepted", c.name)
		}
		if c.a.Message() != nil {
			t.Errorf("%s: a message without frames", c.name)
		}
	}
	a := NewAssembler(KindUpdate, 7, 3, s)
	if err := add(a, frames[0]); err != nil {
		t.Fatal(err)
	}
	if err := add(a, frames[0]); err != nil || a.Message() != nil {
		t.Errorf("a duplicate chunk: %v, complete %v", err, a.Message() != nil)
	}
	bad := *m
	bad.Aux++
	other, _ := Encode(&bad, HeaderSize+8*10)
	if err := add(a, other[1]); err == nil || !strings.Contains(err.Error(), "aux") {
		t.Errorf("a changed aux field: %v", err)
	}
	nan := *m
	nan.Data = append([]float64(nil), m.Data...)
	nan.Data[12] = math.NaN()
	nf, _ := Encode(&nan, HeaderSize+8*10)
	if err := add(NewAssembler(KindUpdate, 7, 3, s), nf[1]); err == nil || !strings.Contains(err.Error(), "value 12 is NaN") {
		t.Errorf("a NaN value: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	m := testMessage(Shape{1, 2, 2, 2})
	if _, err := Encode(m, HeaderSize+7); err == nil {
		t.Error("a payload without room for one value was accepted")
	}
	m.Data = m.Data[1:]
	if _, err := Encode(m, 1<<20); err == nil {
		t.Error("too few values were accepted")
	}
}

// FuzzParseFrame feeds arbitrary bytes to the decoder and an assembler of
// the shape they claim: no input may panic or allocate beyond the
// assembler's shape.
func FuzzParseFrame(f *testing.F) {
	m := testMessage(Shape{2, 3, 2, 2})
	for _, mp := range []int{1 << 20, HeaderSize + 8*10} {
		frames, _ := Encode(m, mp)
		for _, fr := range frames {
			f.Add(fr)
		}
	}
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, data, err := ParseFrame(b)
		if err != nil {
			return
		}
		if len(data)%8 != 0 || uint64(len(data)/8)+h.Offset > uint64(h.Shape.K*h.Shape.N*(h.Shape.D+h.Shape.C)) {
			t.Fatalf("accepted a chunk beyond its message: %+v, %d bytes", h, len(data))
		}
		a := NewAssembler(m.Kind, m.Round, m.Client, m.Shape)
		a.Add(h, data)
	})
}

// TestEncoderReuse encodes messages of several shapes with one Encoder,
// addresses every encoding to two clients and assembles each into the
// memory of the message before it: the values, client and aux arrive
// as sent, and memory large enough is reused.
func TestEncoderReuse(t *testing.T) {
	var enc Encoder
	var spare []float64
	for i, sh := range []Shape{{3, 30, 2, 3}, {1, 2, 1, 1}, {2, 40, 5, 3}, {2, 40, 5, 3}} {
		m := testMessage(sh)
		m.Kind, m.Round = KindRound, uint32(i)
		for j := range m.Data {
			m.Data[j] += float64(i)
		}
		frames, err := enc.Encode(m, HeaderSize+8*37)
		if err != nil {
			t.Fatal(err)
		}
		for _, client := range []uint32{5, 2} {
			aux := uint64(100*i) + uint64(client)
			enc.Address(client, aux)
			a := NewAssembler(KindRound, uint32(i), client, sh)
			a.Recycle(spare)
			for _, f := range frames {
				h, data, err := ParseFrame(f)
				if err != nil {
					t.Fatalf("shape %v: %v", sh, err)
				}
				if h.Aux != aux {
					t.Fatalf("shape %v, client %d: aux %d, want %d", sh, client, h.Aux, aux)
				}
				if _, err := a.Add(h, data); err != nil {
					t.Fatalf("shape %v, client %d: %v", sh, client, err)
				}
			}
			got := a.Message()
			if got == nil || !slices.Equal(got.Data, m.Data) {
				t.Fatalf("shape %v, client %d: the values differ from those sent", sh, client)
			}
			fits := cap(spare) >= len(m.Data)
			if reused := fits && &spare[:1][0] == &got.Data[0]; reused != fits {
				t.Errorf("shape %v: %d values assembled into %d spare: reused %v", sh, len(m.Data), cap(spare), reused)
			}
			spare = got.Data
		}
	}
}

// TestHashValues checks HashValues against XXH64 of the values'
// little-endian bytes, at lengths around its buffer's, and that one bit
// changes it.
func TestHashValues(t *testing.T) {
	for _, n := range []int{0, 1, 511, 512, 513, 1500} {
		v := make([]float64, n)
		b := make([]byte, 8*n)
		for i := range v {
			v[i] = math.Sqrt(float64(i)) - 3
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v[i]))
		}
		h := HashValues(v)
		if want := xxhash.Sum64(b); h != want {
			t.Errorf("%d values: hash %#x, want %#x", n, h, want)
		}
		if n > 0 {
			v[n-1] = math.Float64frombits(math.Float64bits(v[n-1]) ^ 1)
			if HashValues(v) == h {
				t.Errorf("%d values: the hash ignores the last value's lowest bit", n)
			}
		}
	}
}

// BenchmarkFraming encodes one round's atoms at the size of
// Caltech-Office's (K = 3, n = 1000, d = 800, c = 10) in 1 MiB frames,
// addresses them to 4 sites and assembles each site's copy into the
// memory of the last, with the hash a site names its update by: the
// framing work of a round outside NATS.
func BenchmarkFraming(b *testing.B) {
	sh := Shape{K: 3, N: 1000, D: 800, C: 10}
	m := testMessage(sh)
	m.Kind = KindRound
	var enc Encoder
	var spare []float64
	b.SetBytes(4 * 8 * int64(len(m.Data)))
	for range b.N {
		frames, err := enc.Encode(m, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		for site := range uint32(4) {
			enc.Address(site, 0)
			a := NewAssembler(KindRound, m.Round, site, sh)
			a.Recycle(spare)
			for _, f := range frames {
				h, data, err := ParseFrame(f)
				if err == nil {
					_, err = a.Add(h, data)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			spare = a.Message().Data
			HashValues(spare)
		}
	}
}
