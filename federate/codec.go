package federate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dictionary"
)

// The frame format: every frame begins with a header of HeaderSize bytes,
// little-endian,
//
//	offset  size  field
//	     0     4  magic "DDLF"
//	     4     2  version (Version)
//	     6     1  kind (KindRound, KindUpdate, KindFinal, KindSummary,
//	                   KindScale)
//	     7     1  reserved, 0
//	     8     4  round
//	    12     4  client id
//	    16    16  shape: atoms K, points n, features d, classes c
//	    32     4  chunk index
//	    36     4  chunks
//	    40     8  offset of the chunk's first value in the message
//	    48     8  aux: the site's seed (KindRound), its loss as float64
//	              bits (KindUpdate), 0 (the other kinds)
//	    56     8  base: for KindUpdate, the hash (HashValues) of the
//	              atoms the update was computed from; 0 otherwise
//
// followed by the chunk's float64 values, little-endian. A message's values
// are the K atoms in order, each its n×d features then its n×c label
// logits, row-major: K·n·(d+c) values, cut into chunks of
// ⌈values/chunks⌉ values (the last one shorter) so that every frame fits
// the server's maximal payload. A site's summary (KindSummary) and the
// federation's scaling (KindScale) travel in the same format as one "atom"
// of the shapes SummaryShape and ScaleShape give.
const (
	Magic      = "DDLF"
	Version    = 5
	HeaderSize = 64
)

// Kind is the kind of a message.
type Kind uint8

// The kinds of messages.
const (
	// KindRound carries the atoms of a round from the coordinator to a
	// site chosen to train on them.
	KindRound Kind = 1
	// KindUpdate carries a site's atoms after its local epochs back to
	// the coordinator.
	KindUpdate Kind = 2
	// KindFinal carries the final atoms from the coordinator to every
	// site.
	KindFinal Kind = 3
	// KindSummary carries a site's summary statistics (see SummaryShape)
	// to the coordinator, once, before the first round.
	KindSummary Kind = 4
	// KindScale carries the federation's feature scaling (see
	// ScaleShape) from the coordinator to a site, before its first
	// round.
	KindScale Kind = 5
)

func (k Kind) String() string {
	switch k {
	case KindRound:
		return "round"
	case KindUpdate:
		return "update"
	case KindFinal:
		return "final"
	case KindSummary:
		return "summary"
	case KindScale:
		return "scale"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Shape is the shape of a message's atoms: K atoms of N points with D
// features and C classes.
type Shape struct{ K, N, D, C int }

// MaxValues bounds the values of a message: 2³¹ float64 (16 GiB).
const MaxValues = 1 << 31

// Values returns K·N·(D+C), the number of float64 values of the atoms, or
// an error if a size is not positive or the count exceeds MaxValues.
func (s Shape) Values() (int, error) {
	if s.K < 1 || s.N < 1 || s.D < 1 || s.C < 1 {
		return 0, fmt.Errorf("federate: shape %v: every size must be positive", s)
	}
	v := uint64(s.K) * uint64(s.N) // each < 2³², so no overflow below
	if v > MaxValues {
		return 0, fmt.Errorf("federate: shape %v: more than %d values", s, MaxValues)
	}
	v *= uint64(s.D) + uint64(s.C)
	if v > MaxValues {
		return 0, fmt.Errorf("federate: shape %v: more than %d values", s, MaxValues)
	}
	return int(v), nil
}

func (s Shape) String() string { return fmt.Sprintf("%d×%d×(%d+%d)", s.K, s.N, s.D, s.C) }

// Message is one logical message: a kind, the round, a client id, the
// shape and values of atoms, and the aux field.
type Message struct {
	Kind   Kind
	Round  uint32
	Client uint32
	Shape  Shape
	Aux    uint64
	Base   uint64
	Data   []float64
}

// Header is the decoded header of one frame.
type Header struct {
	Kind          Kind
	Round, Client uint32
	Shape         Shape
	Chunk, Chunks uint32
	Offset        uint64
	Aux, Base     uint64
}

// Encode cuts m into frames of at most maxPayload bytes each.
func Encode(m *Message, maxPayload int) ([][]byte, error) {
	var e Encoder
	return e.Encode(m, maxPayload)
}

// Encoder cuts messages into frames as Encode does, reusing the frames'
// memory from one call to the next: the frames it returns are valid until
// its next call. A coordinator that sends one round's atoms to several
// sites encodes them once and readdresses the frames to each (Address).
// Its zero value is ready to use.
type Encoder struct {
	buf    []byte
	frames [][]byte
}

// Encode cuts m into frames of at most maxPayload bytes each, in memory
// the Encoder owns.
func (e *Encoder) Encode(m *Message, maxPayload int) ([][]byte, error) {
	v, err := m.Shape.Values()
	if err != nil {
		return nil, err
	}
	if len(m.Data) != v {
		return nil, fmt.Errorf("federate: %d values for shape %v (want %d)", len(m.Data), m.Shape, v)
	}
	per := (maxPayload - HeaderSize) / 8
	if per < 1 {
		return nil, fmt.Errorf("federate: maximal payload of %d bytes leaves no room after the %d-byte header", maxPayload, HeaderSize)
	}
	chunks := (v + per - 1) / per
	if chunks > math.MaxUint32 {
		return nil, fmt.Errorf("federate: %d chunks", chunks)
	}
	per = (v + chunks - 1) / chunks
	e.buf = slices.Grow(e.buf[:0], HeaderSize*chunks+8*v)[:HeaderSize*chunks+8*v]
	e.frames = e.frames[:0]
	b := e.buf
	for i := range chunks {
		lo, hi := i*per, min((i+1)*per, v)
		h := Header{Kind: m.Kind, Round: m.Round, Client: m.Client, Shape: m.Shape,
			Chunk: uint32(i), Chunks: uint32(chunks), Offset: uint64(lo), Aux: m.Aux, Base: m.Base}
		n := HeaderSize + 8*(hi-lo)
		f := b[:n:n]
		putHeader(f, &h)
		for j, x := range m.Data[lo:hi] {
			binary.LittleEndian.PutUint64(f[HeaderSize+8*j:], math.Float64bits(x))
		}
		e.frames, b = append(e.frames, f), b[n:]
	}
	return e.frames, nil
}

// Address rewrites the client id and the aux field of the frames last
// encoded.
func (e *Encoder) Address(client uint32, aux uint64) {
	for _, f := range e.frames {
		binary.LittleEndian.PutUint32(f[12:], client)
		binary.LittleEndian.PutUint64(f[48:], aux)
	}
}

func putHeader(b []byte, h *Header) {
	le := binary.LittleEndian
	copy(b, Magic)
	le.PutUint16(b[4:], Version)
	b[6], b[7] = byte(h.Kind), 0
	le.PutUint32(b[8:], h.Round)
	le.PutUint32(b[12:], h.Client)
	for i, s := range []int{h.Shape.K, h.Shape.N, h.Shape.D, h.Shape.C} {
		le.PutUint32(b[16+4*i:], uint32(s))
	}
	le.PutUint32(b[32:], h.Chunk)
	le.PutUint32(b[36:], h.Chunks)
	le.PutUint64(b[40:], h.Offset)
	le.PutUint64(b[48:], h.Aux)
	le.PutUint64(b[56:], h.Base)
}

// Errors of frames. A frame that fails with ErrFrame carries no client id
// that can be trusted.
var (
	ErrFrame   = errors.New("federate: malformed frame")
	ErrVersion = errors.New("federate: unsupported message version")
)

// ParseFrame decodes and checks the header of frame b and returns it with
// the chunk's values (a view of b). It checks the magic, the version, the
// kind, the shape (Shape.Values), the chunk's index, its offset and its
// length against the chunking Encode makes.
func ParseFrame(b []byte) (Header, []byte, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrFrame, len(b), HeaderSize)
	}
	if string(b[:4]) != Magic {
		return h, nil, fmt.Errorf("%w: bad magic %q", ErrFrame, b[:4])
	}
	le := binary.LittleEndian
	if v := le.Uint16(b[4:]); v != Version {
		return h, nil, fmt.Errorf("%w %d (this program reads version %d)", ErrVersion, v, Version)
	}
	h.Kind = Kind(b[6])
	if h.Kind < KindRound || h.Kind > KindScale || b[7] != 0 {
		return h, nil, fmt.Errorf("%w: unknown kind %d or reserved byte %d", ErrFrame, b[6], b[7])
	}
	h.Round, h.Client = le.Uint32(b[8:]), le.Uint32(b[12:])
	h.Shape = Shape{int(le.Uint32(b[16:])), int(le.Uint32(b[20:])), int(le.Uint32(b[24:])), int(le.Uint32(b[28:]))}
	h.Chunk, h.Chunks = le.Uint32(b[32:]), le.Uint32(b[36:])
	h.Offset, h.Aux, h.Base = le.Uint64(b[40:]), le.Uint64(b[48:]), le.Uint64(b[56:])
	v, err := h.Shape.Values()
	if err != nil {
		return h, nil, fmt.Errorf("%w: %s", ErrFrame, strings.TrimPrefix(err.Error(), "federate: "))
	}
	if h.Chunks == 0 || uint64(h.Chunks) > uint64(v) || h.Chunk >= h.Chunks {
		return h, nil, fmt.Errorf("%w: chunk %d of %d for %d values", ErrFrame, h.Chunk, h.Chunks, v)
	}
	per := (uint64(v) + uint64(h.Chunks) - 1) / uint64(h.Chunks)
	lo := uint64(h.Chunk) * per
	if lo >= uint64(v) || h.Offset != lo {
		return h, nil, fmt.Errorf("%w: chunk %d of %d starts at value %d, want %d", ErrFrame, h.Chunk, h.Chunks, h.Offset, lo)
	}
	want := min(per, uint64(v)-lo)
	if got := uint64(len(b) - HeaderSize); got != 8*want {
		return h, nil, fmt.Errorf("%w: chunk %d of %d holds %d bytes, want %d", ErrFrame, h.Chunk, h.Chunks, got, 8*want)
	}
	return h, b[HeaderSize:], nil
}

// Assembler puts one message together from its frames, in any order. It
// accepts only frames of the kind, round, client and shape it was made
// for, allocating the message's values (or taking those Recycle gave it)
// when the first frame is accepted.
type Assembler struct {
	want  Header // kind, round, client and shape
	msg   Message
	got   []bool
	left  int
	spare []float64
}

// NewAssembler returns an assembler of the message of kind k, round r and
// client c, of atoms of shape s.
func NewAssembler(k Kind, r, c uint32, s Shape) *Assembler {
	return &Assembler{want: Header{Kind: k, Round: r, Client: c, Shape: s}}
}

// Add adds a frame, with header h and values data as ParseFrame returned
// them, and reports whether the message is complete. A frame of another
// message, a chunk count that changes, an aux field that changes or a
// non-finite value is an error; a chunk received twice is ignored.
func (a *Assembler) Add(h Header, data []byte) (bool, error) {
	w := &a.want
	if h.Kind != w.Kind || h.Round != w.Round || h.Client != w.Client || h.Shape != w.Shape {
		return false, fmt.Errorf("federate: %v frame of round %d, client %d, shape %v; want %v, round %d, client %d, shape %v",
			h.Kind, h.Round, h.Client, h.Shape, w.Kind, w.Round, w.Client, w.Shape)
	}
	if a.got == nil {
		v, _ := h.Shape.Values() // checked by ParseFrame
		data := a.spare[:0]
		if cap(data) < v {
			data = make([]float64, v)
		}
		a.msg = Message{Kind: h.Kind, Round: h.Round, Client: h.Client, Shape: h.Shape, Aux: h.Aux, Base: h.Base, Data: data[:v]}
		a.got, a.left, w.Chunks = make([]bool, h.Chunks), int(h.Chunks), h.Chunks
	}
	if h.Chunks != w.Chunks || h.Aux != a.msg.Aux || h.Base != a.msg.Base {
		return false, fmt.Errorf("federate: chunk %d: the chunk count, aux or base field changed within a message", h.Chunk)
	}
	if a.got[h.Chunk] {
		return a.left == 0, nil
	}
	dst := a.msg.Data[h.Offset : h.Offset+uint64(len(data)/8)]
	for j := range dst {
		x := math.Float64frombits(binary.LittleEndian.Uint64(data[8*j:]))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false, fmt.Errorf("federate: chunk %d: value %d is %g", h.Chunk, h.Offset+uint64(j), x)
		}
		dst[j] = x
	}
	a.got[h.Chunk] = true
	a.left--
	return a.left == 0, nil
}

// Recycle gives the assembler the memory of a message no longer in use
// (its Data) to assemble into instead of allocating it, if it is large
// enough; it must come before the first frame.
func (a *Assembler) Recycle(buf []float64) { a.spare = buf }

// Message returns the assembled message; nil until it is complete.
func (a *Assembler) Message() *Message {
	if a.got == nil || a.left > 0 {
		return nil
	}
	return &a.msg
}

// Pack returns the values of the atoms, in the order of the frame format,
// and their shape. The atoms must share one shape (ShapeOf).
func Pack(atoms []dictionary.Atom) ([]float64, Shape, error) {
	s, err := ShapeOf(atoms)
	if err != nil {
		return nil, s, err
	}
	v, err := s.Values()
	if err != nil {
		return nil, s, err
	}
	out := make([]float64, 0, v)
	for _, a := range atoms {
		for i := range s.N {
			out = append(out, a.X.RawRowView(i)...)
		}
		for i := range s.N {
			out = append(out, a.Logits.RawRowView(i)...)
		}
	}
	return out, s, nil
}

// ShapeOf returns the shape of the atoms, or an error if they have none or
// not all the same.
func ShapeOf(atoms []dictionary.Atom) (Shape, error) {
	if len(atoms) == 0 {
		return Shape{}, errors.New("federate: no atoms")
	}
	var s Shape
	for k, a := range atoms {
		if a.X == nil || a.Logits == nil {
			return s, fmt.Errorf("federate: atom %d is empty", k)
		}
		n, d := a.X.Dims()
		nz, c := a.Logits.Dims()
		if k == 0 {
			s = Shape{K: len(atoms), N: n, D: d, C: c}
		}
		if n != s.N || d != s.D || nz != s.N || c != s.C {
			return s, fmt.Errorf("federate: atom %d has %d×%d points and %d×%d logits; atom 0 has %d×%d and %d×%d", k, n, d, nz, c, s.N, s.D, s.N, s.C)
		}
	}
	return s, nil
}

// Unpack returns the atoms of shape s held by data (Pack's order), which
// it does not copy.
func Unpack(data []float64, s Shape) ([]dictionary.Atom, error) {
	v, err := s.Values()
	if err != nil {
		return nil, err
	}
	if len(data) != v {
		return nil, fmt.Errorf("federate: %d values for shape %v (want %d)", len(data), s, v)
	}
	atoms := make([]dictionary.Atom, s.K)
	for k := range atoms {
		x := data[:s.N*s.D]
		z := data[s.N*s.D : s.N*(s.D+s.C)]
		data = data[s.N*(s.D+s.C):]
		atoms[k] = dictionary.Atom{X: mat.NewDense(s.N, s.D, x), Logits: mat.NewDense(s.N, s.C, z)}
	}
	return atoms, nil
}

// HashValues returns the 64-bit xxHash (XXH64, seed 0) of the values'
// bits, little-endian: an update names by it the atoms it was computed
// from.
func HashValues(v []float64) uint64 {
	var h xxhash.Digest
	h.Reset()
	var buf [4096]byte
	for len(v) > 0 {
		n := min(len(v), len(buf)/8)
		for j, x := range v[:n] {
			binary.LittleEndian.PutUint64(buf[8*j:], math.Float64bits(x))
		}
		h.Write(buf[:8*n])
		v = v[n:]
	}
	return h.Sum64()
}
