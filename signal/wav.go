package signal

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
)

// WAVInfo describes the sample format of a WAV file.
type WAVInfo struct {
	Rate     int  // samples per second and channel
	Channels int  // interleaved channels
	Bits     int  // bits per sample as stored (8, 16, 24, 32 or 64)
	Float    bool // IEEE floating-point samples; integer PCM otherwise
	Frames   int  // samples per channel
}

// Channel selectors of the multi-channel readers (DecodeWAV, Read), besides
// channel numbers counted from 1.
const (
	OnlyChannel = 0  // the file's only channel; an error if it has several
	MeanChannel = -1 // the mean of all channels, frame by frame
)

// WAV format codes (the fmt chunk's wFormatTag, or the first two bytes of
// a WAVE_FORMAT_EXTENSIBLE sub-format).
const (
	wavPCM        = 1
	wavFloat      = 3
	wavALaw       = 6
	wavMuLaw      = 7
	wavExtensible = 0xFFFE
)

// ReadWAV reads one channel of the WAV file at path (see DecodeWAV).
// Errors name the file.
func ReadWAV(path string, channel int) ([]float64, WAVInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, WAVInfo{}, fmt.Errorf("signal: %w", err)
	}
	defer f.Close()
	avail := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		avail = st.Size()
	}
	x, info, err := decodeWAV(bufio.NewReaderSize(f, 1<<16), channel, avail)
	if err != nil {
		return nil, info, fmt.Errorf("signal: %s: %w", path, err)
	}
	return x, info, nil
}

// DecodeWAV reads a RIFF/WAVE stream and returns the samples of one
// channel: channel c ≥ 1 selects channel c counted from 1 (as audio tools
// count them), OnlyChannel the file's only channel (an error for a
// multi-channel file) and MeanChannel the mean of all channels.
//
// Integer PCM samples of 8 (unsigned), 16, 24 or 32 bits are scaled to
// [−1, 1): v / 2^(b−1) for a b-bit container (a WAVE_FORMAT_EXTENSIBLE file
// whose valid bits are fewer than its container's keeps them in the high
// bits, so the same scaling applies); 32- and 64-bit IEEE floating-point
// samples are returned as they are. Chunks other than "fmt " and "data"
// are skipped; a "data" chunk whose size is the placeholder 2³²−1 (a
// stream whose writer never went back to its header) runs to the end of
// the stream. RF64 files (WAV over 4 GiB, EBU Tech 3306) take the data
// size from their "ds64" chunk. It is an error if the stream is not a WAV file, uses
// another encoding (A-law, μ-law, ADPCM, …), is truncated (a chunk shorter
// than its header says), holds no samples or a partial frame, or a
// floating-point sample is NaN or infinite.
func DecodeWAV(r io.Reader, channel int) ([]float64, WAVInfo, error) {
	x, info, err := decodeWAV(r, channel, -1)
	if err != nil {
		return nil, info, fmt.Errorf("signal: %w", err)
	}
	return x, info, nil
}

// decodeWAV is DecodeWAV with errors not yet prefixed. avail, when not
// negative, is the size of the stream in bytes (a file's), which bounds the
// number of frames it can hold.
func decodeWAV(r io.Reader, channel int, avail int64) ([]float64, WAVInfo, error) {
	var info WAVInfo
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, info, fmt.Errorf("not a WAV file: %s", shortRead(err, "the 12-byte RIFF header"))
	}
	rf64 := false
	switch string(hdr[0:4]) {
	case "RIFF":
	case "RF64":
		rf64 = true // sizes over 4 GiB in a "ds64" chunk (EBU Tech 3306)
	case "RIFX":
		return nil, info, fmt.Errorf("big-endian (RIFX) WAV files are not supported")
	default:
		return nil, info, fmt.Errorf("not a WAV file: it starts with %s, not \"RIFF\"", clip.Bytes(hdr[0:4]))
	}
	if string(hdr[8:12]) != "WAVE" {
		return nil, info, fmt.Errorf("not a WAV file: a RIFF file of type %s, not \"WAVE\"", clip.Bytes(hdr[8:12]))
	}
	var block int
	haveFmt := false
	ds64Data := int64(-1) // the data size of an RF64 file's "ds64" chunk
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			if err == io.EOF {
				if !haveFmt {
					return nil, info, fmt.Errorf("no \"fmt \" chunk: the file is truncated or not a WAV file")
				}
				return nil, info, fmt.Errorf("no \"data\" chunk: the file is truncated")
			}
			return nil, info, fmt.Errorf("truncated chunk header: %s", shortRead(err, "8 bytes"))
		}
		id := string(ch[0:4])
		size := int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "ds64":
			if !rf64 {
				return nil, info, fmt.Errorf("a \"ds64\" chunk in a RIFF file (it belongs to RF64 files)")
			}
			if size < 24 || size > 1<<20 {
				return nil, info, fmt.Errorf("\"ds64\" chunk of %d bytes (want 24 to 1 MiB)", size)
			}
			buf := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, buf); err != nil {
				return nil, info, fmt.Errorf("truncated \"ds64\" chunk: %s", shortRead(err, strconv.FormatInt(size, 10)+" bytes"))
			}
			// RIFF size, then data size, then sample count, 64 bits each.
			ds64Data = int64(binary.LittleEndian.Uint64(buf[8:16]))
			if ds64Data < 0 {
				return nil, info, fmt.Errorf("\"ds64\" data size %d is out of range", uint64(ds64Data))
			}
		case "fmt ":
			if haveFmt {
				return nil, info, fmt.Errorf("two \"fmt \" chunks")
			}
			var err error
			if block, info, err = readFmt(r, size); err != nil {
				return nil, info, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, info, fmt.Errorf("the \"data\" chunk comes before the \"fmt \" chunk")
			}
			if rf64 && size == math.MaxUint32 {
				if ds64Data < 0 {
					return nil, info, fmt.Errorf("an RF64 file without a \"ds64\" chunk before its \"data\" chunk")
				}
				size = ds64Data
			}
			x, err := readData(r, size, block, &info, channel, avail)
			return x, info, err
		default:
			if err := skip(r, size+size%2); err != nil {
				return nil, info, fmt.Errorf("chunk %s of %d bytes: %s", clip.Bytes(ch[0:4]), size, shortRead(err, strconv.FormatInt(size, 10)+" bytes"))
			}
		}
	}
}

// readFmt reads a "fmt " chunk of size bytes (and its pad byte) and
// returns the frame size in bytes and the format.
func readFmt(r io.Reader, size int64) (block int, info WAVInfo, err error) {
	if size < 16 || size > 1<<16 {
		return 0, info, fmt.Errorf("\"fmt \" chunk of %d bytes (want 16 to 65536)", size)
	}
	buf := make([]byte, size+size%2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, info, fmt.Errorf("truncated \"fmt \" chunk: %s", shortRead(err, strconv.FormatInt(size, 10)+" bytes"))
	}
	le := binary.LittleEndian
	format := int(le.Uint16(buf[0:2]))
	info.Channels = int(le.Uint16(buf[2:4]))
	info.Rate = int(le.Uint32(buf[4:8]))
	block = int(le.Uint16(buf[12:14]))
	info.Bits = int(le.Uint16(buf[14:16]))
	if format == wavExtensible {
		if size < 40 {
			return 0, info, fmt.Errorf("WAVE_FORMAT_EXTENSIBLE \"fmt \" chunk of %d bytes (want at least 40)", size)
		}
		format = int(le.Uint16(buf[24:26]))
	}
	switch format {
	case wavPCM:
		if info.Bits != 8 && info.Bits != 16 && info.Bits != 24 && info.Bits != 32 {
			return 0, info, fmt.Errorf("%d-bit integer samples (want 8, 16, 24 or 32)", info.Bits)
		}
	case wavFloat:
		info.Float = true
		if info.Bits != 32 && info.Bits != 64 {
			return 0, info, fmt.Errorf("%d-bit floating-point samples (want 32 or 64)", info.Bits)
		}
	case wavALaw:
		return 0, info, fmt.Errorf("A-law encoded samples are not supported (convert to PCM)")
	case wavMuLaw:
		return 0, info, fmt.Errorf("μ-law encoded samples are not supported (convert to PCM)")
	default:
		return 0, info, fmt.Errorf("WAV format code %#x is not supported (want PCM or IEEE float)", format)
	}
	if info.Channels < 1 {
		return 0, info, fmt.Errorf("%d channels", info.Channels)
	}
	if want := info.Channels * info.Bits / 8; block != want {
		return 0, info, fmt.Errorf("frames of %d bytes for %d channels of %d bits (want %d)", block, info.Channels, info.Bits, want)
	}
	return block, info, nil
}

// readData decodes a "data" chunk of size bytes from a stream of avail
// bytes in all (negative: unknown).
func readData(r io.Reader, size int64, block int, info *WAVInfo, channel int, avail int64) ([]float64, error) {
	C := info.Channels
	if err := checkChannel(channel, C); err != nil {
		return nil, err
	}
	frames, unsized, err := dataFrames(size, block)
	if err != nil {
		return nil, err
	}
	bytes := info.Bits / 8
	sample := sampleDecoder(info)
	// Allocate the output once when the stream's size bounds it; otherwise
	// grow it as frames arrive rather than trusting the header's size.
	capacity := min(frames, 1<<20)
	if avail >= 0 {
		capacity = min(frames, avail/int64(block))
	}
	x := make([]float64, 0, capacity)
	buf := make([]byte, block*4096)
	vals := make([]float64, 0, C*4096)
	var done int64
	for done < frames {
		n := min(frames-done, int64(len(buf)/block))
		chunk := buf[:n*int64(block)]
		if m, err := io.ReadFull(r, chunk); err != nil {
			if n, frames, err = shortData(err, m, block, done, size, unsized); err != nil {
				return nil, err
			}
		}
		// Decode every sample of the chunk's n frames, then take the
		// channel.
		chunk = chunk[:n*int64(block)]
		vals = vals[:0]
		for k := 0; k < len(chunk); k += bytes {
			vals = append(vals, sample(chunk[k:k+bytes]))
		}
		x = pick(x, vals, int(n), C, channel)
		if sel := x[done:]; info.Float {
			if i := linalg.FirstNonFinite(sel); i >= 0 {
				return nil, fmt.Errorf("frame %d (counting from 1) is %v", done+int64(i)+1, sel[i])
			}
		}
		done += n
	}
	if len(x) == 0 {
		return nil, fmt.Errorf("no samples (empty \"data\" chunk)")
	}
	info.Frames = len(x)
	return x, nil
}

// dataFrames returns the number of block-byte frames of a "data" chunk of
// size bytes, and whether the chunk is unsized. A size of 2³²−1 (in a RIFF
// file) is the placeholder of a stream whose writer could not seek back to
// its header: the samples run to the end of the file, and frames is
// math.MaxInt64.
func dataFrames(size int64, block int) (frames int64, unsized bool, err error) {
	unsized = size == math.MaxUint32
	if !unsized && size%int64(block) != 0 {
		return 0, false, fmt.Errorf("\"data\" chunk of %d bytes is not a whole number of %d-byte frames", size, block)
	}
	frames = size / int64(block)
	if unsized {
		frames = math.MaxInt64
	}
	if frames == 0 {
		return 0, false, fmt.Errorf("no samples (empty \"data\" chunk)")
	}
	return frames, unsized, nil
}

// sampleDecoder returns the decoder of one sample of info's format, its
// Bits/8 little-endian bytes: IEEE floats as they are, unsigned 8-bit and
// signed 16-, 24- and 32-bit integers scaled by 2^−(Bits−1) into [−1, 1).
func sampleDecoder(info *WAVInfo) func(b []byte) float64 {
	bytes := info.Bits / 8
	scale := math.Ldexp(1, -(info.Bits - 1))
	return func(b []byte) float64 {
		switch {
		case info.Float && bytes == 4:
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case info.Float:
			return math.Float64frombits(binary.LittleEndian.Uint64(b))
		case bytes == 1:
			return float64(int(b[0])-128) * scale
		case bytes == 2:
			return float64(int16(binary.LittleEndian.Uint16(b))) * scale
		case bytes == 3:
			v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			return float64(v) * scale
		default:
			return float64(int32(binary.LittleEndian.Uint32(b))) * scale
		}
	}
}

// shortData handles a read of the "data" chunk that stopped after m bytes
// with err, done frames in. In an unsized chunk the end of the stream on a
// frame boundary ends the samples: it returns the n whole frames read and
// the chunk's frames, done+n. Anything else is an error: a frame cut short,
// a chunk truncated before its size bytes, or the read's own error.
func shortData(err error, m, block int, done, size int64, unsized bool) (n, frames int64, _ error) {
	eof := err == io.ErrUnexpectedEOF || err == io.EOF
	switch {
	case unsized && eof && m%block == 0:
		return int64(m / block), done + int64(m/block), nil
	case unsized && eof:
		return 0, 0, fmt.Errorf("the file ends inside a frame: the \"data\" chunk of unknown size (a stream never finalised) holds %d bytes, not a whole number of %d-byte frames", done*int64(block)+int64(m), block)
	case eof:
		return 0, 0, fmt.Errorf("the file is truncated: its \"data\" chunk has %d of its %d bytes", done*int64(block)+int64(m), size)
	default:
		return 0, 0, err
	}
}

// skip discards n bytes of r.
func skip(r io.Reader, n int64) error {
	m, err := io.CopyN(io.Discard, r, n)
	if err == io.EOF && m < n {
		return io.ErrUnexpectedEOF
	}
	return err
}

// shortRead describes a failed read of want.
func shortRead(err error, want string) string {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return "the file ends before " + want
	}
	return err.Error()
}

// checkChannel checks a channel selector for a file of C channels.
func checkChannel(channel, C int) error {
	switch {
	case channel == OnlyChannel && C > 1:
		return fmt.Errorf("the file has %d channels: choose one (1 … %d) or their mean", C, C)
	case channel > C:
		return fmt.Errorf("channel %d requested, but the file has %d", channel, C)
	case channel < MeanChannel:
		return fmt.Errorf("invalid channel %d", channel)
	}
	return nil
}
