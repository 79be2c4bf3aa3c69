package dataset

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
)

// ReadCSV reads a domain from the CSV file at path.
//
// The first row is a header naming the columns; names are trimmed of
// spaces and must be non-empty and distinct. The column named
// opt.LabelColumn (default "label"), if present, holds the labels;
// every other column is a feature. Each later row is one sample, with as
// many fields as the header. Fields may be quoted (with spaces allowed
// before the opening quote, not after the closing one) and are trimmed of
// spaces. Features are parsed by strconv.ParseFloat and must be finite.
// Labels must be integers; a value such as "3.0" or "3e0" that is an
// exact integer is accepted, "2.5" is not. Empty lines are skipped, and a
// UTF-8 byte order mark at the start of the file is ignored.
//
// If the label column is absent the domain is unlabeled, unless
// opt.LabelColumn was set explicitly, in which case that is an error. With
// opt.Unlabeled the label column is dropped without being parsed.
//
// Errors name the file, the line and the column, for example
//
//	dataset: src.csv: line 17, column "f3": "abc" is not a number
func ReadCSV(path string, opt *ReadOptions) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	x, labels, names, err := readCSVNamed(f, options(opt))
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("dataset: %w", err)
		}
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	d, err := newFileOpt(path, x, labels, options(opt))
	if err != nil {
		return nil, err
	}
	d.Features = names
	return d, nil
}

// maxExactInt is the largest integer magnitude below which every integer
// is a float64.
const maxExactInt = 1 << 53

// readCSV parses CSV data. It returns the features and the labels, nil if
// there are none.
func readCSV(r io.Reader, opt ReadOptions) (*mat.Dense, []int, error) {
	x, labels, _, err := readCSVNamed(r, opt)
	return x, labels, err
}

// readCSVNamed is readCSV that also returns the names of the feature
// columns, in order.
func readCSVNamed(r io.Reader, opt ReadOptions) (*mat.Dense, []int, []string, error) {
	br := bufio.NewReader(r)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true

	cols, seen, first, err := readCSVHeader(cr, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	lay, err := newCSVLayout(cols, seen, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	data, labels, rows, err := lay.readRows(cr, first)
	if err != nil {
		return nil, nil, nil, err
	}
	if rows == 0 {
		if opt.NoHeader {
			return nil, nil, nil, errors.New("no data rows")
		}
		return nil, nil, nil, errors.New("no data rows: the file has only the header")
	}
	names := make([]string, 0, lay.d)
	for j, c := range cols {
		if j != lay.labelCol {
			names = append(names, c)
		}
	}
	return mat.NewDense(rows, lay.d, data), labels, names, nil
}

// readCSVHeader reads the first row of cr and returns the column names,
// trimmed, non-empty and distinct, with the index of each. With
// opt.NoHeader the columns are named 1, 2, … and the row is returned as
// first, the first data row.
func readCSVHeader(cr *csv.Reader, opt ReadOptions) (cols []string, seen map[string]int, first []string, err error) {
	header, err := cr.Read()
	if err == io.EOF {
		if opt.NoHeader {
			return nil, nil, nil, errors.New("empty file")
		}
		return nil, nil, nil, errors.New("empty file: want a header row naming the columns")
	}
	if err != nil {
		return nil, nil, nil, clip.CSVError(err)
	}
	if opt.NoHeader {
		first = slices.Clone(header)
		for j := range header {
			header[j] = strconv.Itoa(j + 1)
		}
	}
	cols = make([]string, len(header))
	seen = make(map[string]int, len(header))
	for j, h := range header {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, nil, nil, fmt.Errorf("line 1: column %d has an empty name (the header row must name every column; an unnamed first column is often a pandas index: write the file with index=False)", j+1)
		}
		if k, dup := seen[h]; dup {
			return nil, nil, nil, fmt.Errorf("line 1: columns %d and %d are both named %s%s", k+1, j+1, clip.Quote(h), numericHeaderHint(header))
		}
		seen[h] = j
		cols[j] = h
	}
	return cols, seen, first, nil
}

// numericHeaderHint returns a hint for a header row whose every field is
// a number, which is more likely the first data row of a file without a
// header; "" otherwise.
func numericHeaderHint(header []string) string {
	for _, h := range header {
		if _, err := strconv.ParseFloat(strings.TrimSpace(h), 64); err != nil {
			return ""
		}
	}
	return " (the first row holds only numbers: if it is data, the file has no header row; read it with ReadOptions.NoHeader, dadil's --no-header)"
}

// csvLayout is the layout of a CSV file's columns: the label column
// (−1 if none) and d feature columns.
type csvLayout struct {
	cols         []string
	labelCol     int
	d            int
	parseLabels  bool // the label column is parsed (not dropped by opt.Unlabeled)
	allowMissing bool
}

// newCSVLayout finds the label column opt.LabelColumn (default "label")
// among cols: its absence is an error if it was named explicitly, unless
// labels are optional or dropped; at least one feature column must
// remain.
func newCSVLayout(cols []string, seen map[string]int, opt ReadOptions) (*csvLayout, error) {
	labelName, explicit := opt.LabelColumn, opt.LabelColumn != ""
	if !explicit {
		labelName = defaultLabelColumn
	}
	labelCol, hasLabel := seen[labelName]
	if !hasLabel {
		labelCol = -1
		if explicit && !opt.Unlabeled && !opt.LabelsOptional {
			return nil, fmt.Errorf("no label column %s (columns: %s)", clip.Quote(labelName), listNames(cols))
		}
	}
	d := len(cols)
	if hasLabel {
		d--
	}
	if d == 0 {
		return nil, fmt.Errorf("no feature columns: the only column is the label column %s", clip.Quote(labelName))
	}
	return &csvLayout{cols: cols, labelCol: labelCol, d: d, parseLabels: hasLabel && !opt.Unlabeled, allowMissing: opt.AllowMissing}, nil
}

// readRows reads the data rows of cr, first (if not nil) before them, and
// returns their features row-major, their labels (nil if not parsed) and
// their number. Lines of spaces are skipped.
func (lay *csvLayout) readRows(cr *csv.Reader, first []string) (data []float64, labels []int, rows int, err error) {
	for {
		var rec []string
		line := 1
		if first != nil {
			rec, first = first, nil
		} else if rec, err = cr.Read(); err == nil {
			line, _ = cr.FieldPos(0)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, 0, clip.CSVError(err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" && len(lay.cols) > 1 {
			// A line of spaces: treat it as empty.
			continue
		}
		if len(rec) != len(lay.cols) {
			return nil, nil, 0, fmt.Errorf("line %d: %d fields, the header has %d columns", line, len(rec), len(lay.cols))
		}
		if data, labels, err = lay.parseRecord(data, labels, rec, line); err != nil {
			return nil, nil, 0, err
		}
		rows++
	}
	return data, labels, rows, nil
}

// parseRecord appends the features of rec, the record at line, to data
// and its label, if parsed, to labels.
func (lay *csvLayout) parseRecord(data []float64, labels []int, rec []string, line int) ([]float64, []int, error) {
	for j, field := range rec {
		s := strings.TrimSpace(field)
		if j == lay.labelCol {
			if !lay.parseLabels {
				continue
			}
			l, err := parseLabel(s)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d, column %s: %w", line, clip.Quote(lay.cols[j]), err)
			}
			labels = append(labels, l)
			continue
		}
		v, err := parseFeature(s, lay.allowMissing)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d, column %s: %w", line, clip.Quote(lay.cols[j]), err)
		}
		data = append(data, v)
	}
	return data, labels, nil
}

// missingCells are the CSV cells that mean a missing value (compared
// without case).
var missingCells = []string{"", "?", "na", "n/a", "nan", "null"}

// isMissing reports whether the CSV cell s means a missing value.
func isMissing(s string) bool {
	return slices.Contains(missingCells, strings.ToLower(s))
}

// parseFeature parses a feature value, which must be a finite number or,
// with missing, a missing value (returned as NaN).
func parseFeature(s string, missing bool) (float64, error) {
	if isMissing(s) {
		if missing {
			return math.NaN(), nil
		}
		if s == "" {
			return 0, errors.New("empty value (a missing value: choose a missing-value policy to read it)")
		}
		return 0, fmt.Errorf("%s is a missing value: choose a missing-value policy to read it", clip.Quote(s))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s is outside the float64 range", clip.Quote(s))
		}
		if errors.Is(err, strconv.ErrRange) {
			return v, nil // underflow to zero or a subnormal number
		}
		return 0, fmt.Errorf("%s is not a number", clip.Quote(s))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s is not a finite number", clip.Quote(s))
	}
	return v, nil
}

// parseLabel parses a label, which must be an integer.
func parseLabel(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty label")
	}
	if l, err := strconv.Atoi(s); err == nil {
		return l, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("label %s is not an integer", clip.Quote(s))
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("label %s is not an integer", clip.Quote(s))
	}
	if math.Abs(v) >= maxExactInt {
		return 0, fmt.Errorf("label %s is too large", clip.Quote(s))
	}
	return int(v), nil
}

// listNames joins names for messages, shortening long lists and long
// names (clip.List).
func listNames(names []string) string { return clip.List(names, 12) }
