package signal

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/mewkiz/flac"
)

// FLACInfo describes the sample format of a FLAC stream.
type FLACInfo struct {
	Rate     int // samples per second and channel
	Channels int // channels (1 to 8)
	Bits     int // bits per sample (4 to 32)
	Frames   int // samples per channel
}

// ReadFLAC reads one channel of the FLAC file at path (see DecodeFLAC).
// Errors name the file.
func ReadFLAC(path string, channel int) ([]float64, FLACInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, FLACInfo{}, fmt.Errorf("signal: %w", err)
	}
	defer f.Close()
	x, info, err := decodeFLAC(bufio.NewReaderSize(f, 1<<16), channel)
	if err != nil {
		return nil, info, fmt.Errorf("signal: %s: %w", path, err)
	}
	return x, info, nil
}

// DecodeFLAC reads a FLAC stream (the lossless audio codec of Xiph.Org, as
// written by the flac tool) and returns the samples of one channel, chosen as
// by DecodeWAV: channel c ≥ 1, OnlyChannel or MeanChannel. Samples of b
// ≤ 24 bits (32-bit streams are not supported) are scaled to [−1, 1) as v / 2^(b−1), as WAV integer PCM is, so a
// recording gives the same signal from either format. Every frame's CRC
// is checked and, when the stream carries one, the MD5 signature of the
// decoded audio. It is an error if the stream is not FLAC, is truncated
// (fewer samples than its header announces, or a frame cut short), fails a
// check, or holds no samples.
//
// The decoder (github.com/mewkiz/flac) writes a line to the standard
// logger for every frame of a stream sampled at 24 or 176.4 kHz; programs
// that mind can silence it with log.SetOutput (the dadil command does).
func DecodeFLAC(r io.Reader, channel int) ([]float64, FLACInfo, error) {
	x, info, err := decodeFLAC(r, channel)
	if err != nil {
		return nil, info, fmt.Errorf("signal: %w", err)
	}
	return x, info, nil
}

// headReader passes reads through and keeps the stream's first four bytes
// and its length so far, so that a stream cut inside its header can be told
// from one that is not FLAC at all.
type headReader struct {
	r     io.Reader
	head  [4]byte
	n     int // bytes of head filled
	total int64
}

func (h *headReader) Read(p []byte) (int, error) {
	k, err := h.r.Read(p)
	if h.n < len(h.head) {
		h.n += copy(h.head[h.n:], p[:k])
	}
	h.total += int64(k)
	return k, err
}

// errFLACPanic reports a panic inside the FLAC decoder (a malformed stream
// it does not guard against).
var errFLACPanic = errors.New("malformed FLAC stream")

// decodeFLAC is DecodeFLAC with errors not yet prefixed.
func decodeFLAC(r io.Reader, channel int) (x []float64, info FLACInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			x, err = nil, fmt.Errorf("%w (%v)", errFLACPanic, p)
		}
	}()
	head := &headReader{r: r}
	stream, err := flac.New(head)
	if err != nil {
		if bytes.HasPrefix(head.head[:head.n], []byte("fLaC")) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			return nil, info, fmt.Errorf("the file is truncated: it ends inside its header (metadata blocks), after %d bytes", head.total)
		}
		return nil, info, fmt.Errorf("not a FLAC file: %w", err)
	}
	si := stream.Info
	info = FLACInfo{Rate: int(si.SampleRate), Channels: int(si.NChannels), Bits: int(si.BitsPerSample)}
	C := info.Channels
	if info.Bits < 4 || info.Bits > 32 || C < 1 || C > 8 || info.Rate < 1 {
		return nil, info, fmt.Errorf("invalid stream header: %d channels of %d bits at %d Hz", C, info.Bits, info.Rate)
	}
	if info.Bits > 24 {
		// FLAC 1.4's 32-bit frames use a header code the decoder rejects.
		return nil, info, fmt.Errorf("%d-bit FLAC streams are not supported (at most 24 bits): convert the file to WAV", info.Bits)
	}
	if err := checkChannel(channel, C); err != nil {
		return nil, info, err
	}
	scale := math.Ldexp(1, -(info.Bits - 1))
	var zero [md5.Size]byte
	checkMD5 := si.MD5sum != zero
	sum := md5.New()
	// Allocate for the announced length when it is plausible; grow
	// otherwise.
	x = make([]float64, 0, min(si.NSamples, 1<<22))
	vals := make([]float64, 0, C*4096)
	for {
		fr, err := stream.ParseNext()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, info, fmt.Errorf("the file is truncated: it ends inside the frame after sample %d", len(x))
			}
			return nil, info, fmt.Errorf("frame after sample %d: %w", len(x), err)
		}
		if len(fr.Subframes) != C || fr.BitsPerSample != 0 && int(fr.BitsPerSample) != info.Bits {
			return nil, info, fmt.Errorf("frame after sample %d: %d channels of %d bits, the stream header says %d of %d", len(x), len(fr.Subframes), fr.BitsPerSample, C, info.Bits)
		}
		n := int(fr.BlockSize)
		for _, sub := range fr.Subframes {
			if len(sub.Samples) != n {
				return nil, info, fmt.Errorf("frame after sample %d: a channel holds %d of its %d samples", len(x), len(sub.Samples), n)
			}
		}
		if checkMD5 {
			fr.Hash(sum)
		}
		vals = vals[:0]
		for i := 0; i < n; i++ {
			for _, sub := range fr.Subframes {
				vals = append(vals, float64(sub.Samples[i])*scale)
			}
		}
		x = pick(x, vals, n, C, channel)
	}
	switch {
	case si.NSamples > 0 && uint64(len(x)) < si.NSamples:
		return nil, info, fmt.Errorf("the file is truncated: %d of the %d samples its header announces", len(x), si.NSamples)
	case si.NSamples > 0 && uint64(len(x)) > si.NSamples:
		return nil, info, fmt.Errorf("%d samples, but its header announces %d", len(x), si.NSamples)
	case len(x) == 0:
		return nil, info, fmt.Errorf("no samples")
	}
	if checkMD5 && !bytes.Equal(sum.Sum(nil), si.MD5sum[:]) {
		return nil, info, fmt.Errorf("the decoded audio does not match the file's MD5 signature: the file is corrupt")
	}
	info.Frames = len(x)
	return x, info, nil
}
