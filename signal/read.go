package signal

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/npy"

	"github.com/dadil/dadil/internal/linalg"
)

// ReadOptions selects the signal of a recording file for Read. The zero
// value reads the drive-end channel of a CWRU MATLAB file, and the only
// signal of any other file.
type ReadOptions struct {
	// Variable names the signal: a MATLAB variable, an .npz array or a
	// CSV column (by its header). Empty: for a MATLAB file the CWRU
	// variable of Sensor (see CWRUVariable), for an .npz archive its only
	// array, for a CSV file the column Channel selects.
	Variable string
	// Sensor is the CWRU channel, "DE" (drive end, the default), "FE"
	// (fan end) or "BA" (base), that finds a MATLAB file's variable when
	// Variable is empty.
	Sensor string
	// Channel selects a channel of a multi-channel signal: of a WAV or FLAC file,
	// a 2-D NumPy array (frames × channels) or a CSV file (its columns),
	// counted from 1; or OnlyChannel (the zero value: the signal must have
	// one channel) or MeanChannel (their mean, frame by frame).
	Channel int
}

// Recording is a signal read from a file.
type Recording struct {
	Samples []float64
	// Signal says which signal of the file was read: a variable, array or
	// column name, "channel 2 of 4", "mean of 2 channels", or "" for the
	// only signal of a WAV or NumPy file.
	Signal string
	// Rate is the sampling rate in hertz when the file records it (WAV,
	// FLAC), zero otherwise.
	Rate int
}

// Read reads a recording, choosing the reader by the file's extension:
// MATLAB level-5 files (.mat, see ReadChannel), WAV audio (.wav, see
// DecodeWAV), FLAC audio (.flac, see DecodeFLAC), NumPy arrays (.npy, .npz: a 1-D array, a 1×n row or an n×c
// array of n frames of c channels) and CSV text (.csv: one column per
// channel, one row per frame, an optional header row naming the columns).
// It is an error if the signal is empty or holds NaN or infinite values;
// errors name the file and the signal.
func Read(path string, opt *ReadOptions) (*Recording, error) {
	var o ReadOptions
	if opt != nil {
		o = *opt
	}
	ext := strings.ToLower(filepath.Ext(path))
	if o.Channel < MeanChannel {
		return nil, fmt.Errorf("signal: %s: invalid channel %d", path, o.Channel)
	}
	if o.Channel != OnlyChannel && ext == ".mat" {
		return nil, fmt.Errorf("signal: %s: channel numbers and the mean of channels apply to WAV, NumPy and CSV files; name a MATLAB file's signal by its variable or CWRU sensor", path)
	}
	if o.Sensor != "" && ext != ".mat" {
		return nil, fmt.Errorf("signal: %s: the CWRU sensor %s applies to MATLAB files only", path, clip.Quote(o.Sensor))
	}
	var rec *Recording
	var err error
	switch ext {
	case ".mat":
		sensor := o.Sensor
		if sensor == "" {
			sensor = "DE"
		}
		x, v, err := ReadChannel(path, o.Variable, sensor)
		if err != nil {
			return nil, err
		}
		return &Recording{Samples: x, Signal: v}, nil
	case ".wav", ".flac":
		if o.Variable != "" {
			return nil, fmt.Errorf("signal: %s: %s channels have no names: choose one by its number", path, strings.ToUpper(ext[1:]))
		}
		x, rate, channels, err := readAudio(path, ext, o.Channel)
		if err != nil {
			return nil, err
		}
		return &Recording{Samples: x, Signal: channelName(o.Channel, channels), Rate: rate}, nil
	case ".npy":
		if o.Variable != "" {
			return nil, fmt.Errorf("signal: %s: a .npy file holds one array: the variable %s applies to .npz archives, MATLAB and CSV files", path, clip.Quote(o.Variable))
		}
		var a *npy.Array
		if a, err = npy.ReadFile(path); err != nil {
			return nil, fmt.Errorf("signal: %w", err)
		}
		rec, err = arraySignal(a, o.Channel)
	case ".npz":
		var arrays map[string]*npy.Array
		if arrays, err = npy.ReadNPZ(path); err != nil {
			return nil, fmt.Errorf("signal: %w", err)
		}
		rec, err = npzSignal(arrays, o)
	case ".csv":
		f, ferr := os.Open(path)
		if ferr != nil {
			return nil, fmt.Errorf("signal: %w", ferr)
		}
		defer f.Close()
		rec, err = decodeCSV(f, o.Variable, o.Channel)
	default:
		return nil, fmt.Errorf("signal: %s: unknown recording format %s (want .mat, .wav, .flac, .npy, .npz or .csv)", path, clip.Quote(ext))
	}
	if err != nil {
		return nil, fmt.Errorf("signal: %s: %w", path, err)
	}
	if i := linalg.FirstNonFinite(rec.Samples); i >= 0 {
		what := "sample"
		if rec.Signal != "" {
			what = rec.Signal + ": sample"
		}
		return nil, fmt.Errorf("signal: %s: %s %d (counting from 1) is %v", path, what, i+1, rec.Samples[i])
	}
	return rec, nil
}

// readAudio reads channel ch of a WAV or FLAC file (by its extension ext),
// with its sampling rate and number of channels.
func readAudio(path, ext string, ch int) (x []float64, rate, channels int, err error) {
	if ext == ".flac" {
		x, info, err := ReadFLAC(path, ch)
		return x, info.Rate, info.Channels, err
	}
	x, info, err := ReadWAV(path, ch)
	return x, info.Rate, info.Channels, err
}

// channelName describes the channel selector ch of a file of C channels.
func channelName(ch, C int) string {
	switch {
	case ch == MeanChannel && C > 1:
		return fmt.Sprintf("mean of %d channels", C)
	case ch > 0 && C > 1:
		return fmt.Sprintf("channel %d of %d", ch, C)
	}
	return ""
}

// npzSignal takes the signal of an .npz archive: the array named by
// o.Variable, or its only array.
func npzSignal(arrays map[string]*npy.Array, o ReadOptions) (*Recording, error) {
	names := make([]string, 0, len(arrays))
	for n := range arrays {
		names = append(names, n)
	}
	slices.Sort(names)
	name := o.Variable
	switch {
	case name == "" && len(names) == 1:
		name = names[0]
	case name == "":
		return nil, fmt.Errorf("the archive holds %d arrays (%s): name the signal's", len(names), clip.List(names, 12))
	case arrays[name] == nil:
		return nil, fmt.Errorf("no array %s (the archive holds %s)", clip.Quote(name), clip.List(names, 12))
	}
	rec, err := arraySignal(arrays[name], o.Channel)
	if err != nil {
		return nil, fmt.Errorf("array %s: %w", clip.Name(name), err)
	}
	if rec.Signal == "" {
		rec.Signal = name
	} else {
		rec.Signal = name + ", " + rec.Signal
	}
	return rec, nil
}

// arraySignal takes the signal of a NumPy array: a vector (n or 1×n), or
// channel ch of n frames × c channels.
func arraySignal(a *npy.Array, ch int) (*Recording, error) {
	var n, C int
	switch {
	case len(a.Shape) == 1:
		n, C = a.Shape[0], 1
	case len(a.Shape) == 2 && a.Shape[0] == 1:
		n, C = a.Shape[1], 1
	case len(a.Shape) == 2:
		n, C = a.Shape[0], a.Shape[1]
	default:
		return nil, fmt.Errorf("shape %v: a signal is a 1-D array, or a 2-D array of frames × channels", a.Shape)
	}
	if n == 0 || C == 0 {
		return nil, fmt.Errorf("shape %v: no samples", a.Shape)
	}
	if err := checkChannel(ch, C); err != nil {
		return nil, err
	}
	rec := &Recording{Signal: channelName(ch, C)}
	rec.Samples = pick(nil, a.Data, n, C, ch)
	return rec, nil
}

// pick appends to dst channel ch of n frames of C interleaved channels
// (see ReadOptions.Channel) and returns it; with dst nil and C = 1 it
// returns data itself.
func pick(dst, data []float64, n, C, ch int) []float64 {
	if C == 1 {
		if dst == nil {
			return data[:n]
		}
		return append(dst, data[:n]...)
	}
	for i := range n {
		fr := data[i*C : (i+1)*C]
		if ch > 0 {
			dst = append(dst, fr[ch-1])
			continue
		}
		var v float64
		for _, s := range fr {
			v += s
		}
		dst = append(dst, v/float64(C))
	}
	return dst
}

// decodeCSV reads a signal from CSV text: one row per frame, one column
// per channel, and an optional header row (a first row that is not all
// numbers) naming the columns. variable picks a column by its header,
// otherwise ch does (see ReadOptions.Channel).
func decodeCSV(r io.Reader, variable string, ch int) (*Recording, error) {
	cr := newCSVReader(r)
	first, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("empty file")
	}
	if err != nil {
		return nil, csvError(err)
	}
	C := len(first)
	var header []string
	for _, f := range first {
		if _, err := parseSample(f); err != nil {
			header = slices.Clone(first)
			break
		}
	}
	col, err := csvColumn(header, C, variable, ch)
	if err != nil {
		return nil, err
	}
	rec := &Recording{}
	switch {
	case col >= 0 && header != nil:
		rec.Signal = header[col]
	case col >= 0:
		rec.Signal = channelName(ch, C)
	default:
		rec.Signal = channelName(MeanChannel, C)
	}
	var x []float64
	row := first
	for line := 1; ; line++ {
		if line > 1 || header == nil {
			v, err := rowValue(row, col)
			if err != nil {
				l, _ := cr.FieldPos(0)
				return nil, fmt.Errorf("line %d: %w", l, err)
			}
			x = append(x, v)
		}
		if row, err = cr.Read(); err == io.EOF {
			break
		} else if err != nil {
			return nil, csvError(err)
		}
	}
	if len(x) == 0 {
		return nil, fmt.Errorf("no data rows: the file has only the header")
	}
	rec.Samples = x
	return rec, nil
}

// newCSVReader returns a CSV reader of r, reusing its records and trimming
// leading spaces, past a UTF-8 byte-order mark (spreadsheet exports) that
// is not part of the first value.
func newCSVReader(r io.Reader) *csv.Reader {
	br := bufio.NewReaderSize(r, 1<<16)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	return cr
}

// csvColumn returns the column of a CSV file of C columns, named by header
// (nil without a header row), that variable or else ch selects: its index
// from 0, or −1 for the mean of the columns.
func csvColumn(header []string, C int, variable string, ch int) (int, error) {
	switch {
	case variable != "" && header == nil:
		return 0, fmt.Errorf("column %s: the file has no header row naming its columns", clip.Quote(variable))
	case variable != "" && ch != OnlyChannel:
		return 0, fmt.Errorf("give a column by its name or its number, not both")
	case variable != "":
		col := slices.Index(header, variable)
		if col < 0 {
			return 0, fmt.Errorf("no column %s (the header names %s)", clip.Quote(variable), clip.List(header, 12))
		}
		return col, nil
	}
	if err := checkChannel(ch, C); err != nil {
		if ch == OnlyChannel && header != nil {
			return 0, fmt.Errorf("the file has %d columns (%s): choose one by its name or number, or their mean", C, clip.List(header, 12))
		}
		return 0, err
	}
	switch {
	case ch == OnlyChannel:
		return 0, nil
	case ch > 0:
		return ch - 1, nil
	}
	return -1, nil
}

// rowValue returns column col of a CSV row, or the mean of its columns
// when col < 0.
func rowValue(row []string, col int) (float64, error) {
	if col >= 0 {
		v, err := parseSample(row[col])
		if err != nil {
			return 0, fmt.Errorf("column %d: %w", col+1, err)
		}
		return v, nil
	}
	var s float64
	for c, f := range row {
		v, err := parseSample(f)
		if err != nil {
			return 0, fmt.Errorf("column %d: %w", c+1, err)
		}
		s += v
	}
	return s / float64(len(row)), nil
}

// parseSample parses one CSV value.
func parseSample(f string) (float64, error) {
	f = strings.TrimSpace(f)
	if f == "" {
		return 0, fmt.Errorf("empty value")
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a number", clip.Quote(f))
	}
	return v, nil
}

// csvError rewords encoding/csv's errors (clip.CSVError), a record with
// another number of fields in the words of a recording.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d: a different number of columns than the first row", pe.Line)
		}
	}
	return clip.CSVError(err)
}
