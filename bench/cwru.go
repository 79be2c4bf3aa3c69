package bench

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/signal"
)

// CWRUDomains are the domains of the paper's CWRU experiment, named by the
// nominal shaft speed of each motor load: 1 HP (1772 rpm), 2 HP (1750 rpm)
// and 3 HP (1730 rpm).
var CWRUDomains = []string{"1772", "1750", "1730"}

//go:embed cwru_files.csv
var cwruFilesCSV string

// CWRUFile is one recording of the CWRU file map.
type CWRUFile struct {
	Path     string // relative to the data folder, with forward slashes
	Label    int    // class label (the paper's numbering: 0 normal, 1–9 faults)
	Class    string // class name
	Domain   string // domain name (nominal rpm)
	Variable string // the variable holding the signal; empty: the file's default (see signal.Read)
}

// CWRUFiles returns the file map of the paper's experiment (appendix, table
// of file ids): the 12 kHz drive-end recordings of ten classes — normal,
// and inner-race, ball and outer-race (@6:00) faults of 0.007, 0.014 and
// 0.021 in — under the three motor loads. The map is data (cwru_files.csv
// in this package), not code; ReadCWRUFiles reads another one.
func CWRUFiles() []CWRUFile {
	files, err := parseCWRUFiles("cwru_files.csv", strings.NewReader(cwruFilesCSV))
	if err != nil {
		panic(err) // the embedded map is tested
	}
	return files
}

// ReadCWRUFiles reads a file map in the format of CWRUFiles' cwru_files.csv:
// lines starting with # are comments, then a header row
// "file,label,class,domain,variable" and one row per recording; an empty
// variable stands for the file's default signal (for a CWRU MATLAB file
// its drive-end variable; for a WAV, NumPy or CSV recording, as
// signal.Read). Errors name the file, the line and the problem.
func ReadCWRUFiles(path string) ([]CWRUFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	return parseCWRUFiles(path, f)
}

// fieldLimit is the longest value of a field of a file map: a path
// (PATH_MAX on Linux) or a name.
func fieldLimit(field string) int {
	if field == "file" {
		return 4096
	}
	return 256
}

// pathList joins paths for a message (clip.Path), at most 12 of them.
func pathList(paths []string) string {
	var q []string
	for _, p := range paths[:min(len(paths), 12)] {
		q = append(q, clip.Path(p))
	}
	s := strings.Join(q, ", ")
	if len(paths) > 12 {
		s += fmt.Sprintf(", … (%d in all)", len(paths))
	}
	return s
}

func parseCWRUFiles(name string, r io.Reader) ([]CWRUFile, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1 // checked below, so that errors can name the header
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("bench: %s: empty file map", name)
		}
		return nil, fmt.Errorf("bench: %s: %w", name, clip.CSVError(err))
	}
	want := []string{"file", "label", "class", "domain", "variable"}
	if !slices.Equal(head, want) {
		return nil, fmt.Errorf("bench: %s: header %s, want %q", name, clip.Quote(strings.Join(head, ",")), strings.Join(want, ","))
	}
	var files []CWRUFile
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", name, clip.CSVError(err))
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(want) {
			return nil, fmt.Errorf("bench: %s: line %d: %d fields, want %d (%s)", name, line, len(rec), len(want), strings.Join(want, ","))
		}
		label, err := strconv.Atoi(rec[1])
		if err != nil {
			return nil, fmt.Errorf("bench: %s: line %d: label %s is not an integer", name, line, clip.Quote(rec[1]))
		}
		// An empty variable is the file's default signal.
		for i, field := range []string{"file", "", "class", "domain"} {
			if field != "" && rec[i] == "" {
				return nil, fmt.Errorf("bench: %s: line %d: empty %s", name, line, field)
			}
		}
		for i, field := range want {
			if limit := fieldLimit(field); len(rec[i]) > limit {
				return nil, fmt.Errorf("bench: %s: line %d: %s %s is longer than %d bytes", name, line, field, clip.Quote(rec[i]), limit)
			}
		}
		p := path.Clean(filepath.ToSlash(rec[0]))
		if prev, ok := seen[p]; ok {
			return nil, fmt.Errorf("bench: %s: line %d: file %s is already listed on line %d", name, line, clip.Path(rec[0]), prev)
		}
		seen[p] = line
		files = append(files, CWRUFile{Path: p, Label: label, Class: rec[2], Domain: rec[3], Variable: rec[4]})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("bench: %s: the file map lists no files", name)
	}
	names := map[int]string{}
	for _, f := range files {
		if n, ok := names[f.Label]; ok && n != f.Class {
			return nil, fmt.Errorf("bench: %s: label %d is called both %s and %s", name, f.Label, clip.Quote(n), clip.Quote(f.Class))
		}
		names[f.Label] = f.Class
	}
	return files, nil
}

// CWRU holds the recordings of the CWRU benchmark, grouped by domain and
// class.
type CWRU struct {
	Dir     string
	Domains []string // in the order of the file map
	// Labels[k] is the label of class index k (sorted), Names[k] its name.
	Labels []int
	Names  []string
	// Dropped lists the classes of the map with no recording present in
	// any domain (such as "normal" when 98.mat, 99.mat and 100.mat are
	// absent), which the benchmark leaves out.
	Dropped []string
	// rec[d][k] holds the recordings of domain d and class k.
	rec [][][]recording
}

// check reports whether c holds a loaded benchmark, as LoadCWRU returns
// it.
func (c *CWRU) check() error {
	if c == nil || len(c.rec) == 0 || len(c.rec) != len(c.Domains) {
		return errors.New("bench: cwru: the benchmark is not loaded (use LoadCWRU)")
	}
	return nil
}

type recording struct {
	path string
	x    []float64
}

// CWRUFileDomains returns the domains of the file map files, in the order
// of their first rows.
func CWRUFileDomains(files []CWRUFile) []string {
	var doms []string
	for _, f := range files {
		if !slices.Contains(doms, f.Domain) {
			doms = append(doms, f.Domain)
		}
	}
	return doms
}

// CWRUPresence is what of a file map is present in a data folder.
type CWRUPresence struct {
	// Files are the rows of the map whose class has recordings, in the
	// map's order, sorted by label.
	Files []CWRUFile
	// Dropped lists, as "label (class)", the classes none of whose files
	// is present (such as "0 (normal)" when 98.mat, 99.mat and 100.mat are
	// absent).
	Dropped []string
}

// PresentCWRUFiles applies the rule of LoadCWRU to a file map: a class none
// of whose files is present in dir is dropped; a class with only some of
// its files present is an error naming the missing ones, since a class
// missing from a domain would silently change the problem. It only checks
// that the files exist.
func PresentCWRUFiles(dir string, files []CWRUFile) (*CWRUPresence, error) {
	present := map[int][]CWRUFile{}
	missing := map[int][]string{}
	var labels []int
	names := map[int]string{}
	for _, f := range files {
		if _, ok := names[f.Label]; !ok {
			labels = append(labels, f.Label)
			names[f.Label] = f.Class
		}
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case err == nil:
			present[f.Label] = append(present[f.Label], f)
		case errors.Is(err, fs.ErrNotExist):
			missing[f.Label] = append(missing[f.Label], f.Path)
		default:
			return nil, fmt.Errorf("bench: cwru: %w", err)
		}
	}
	slices.Sort(labels)
	p := &CWRUPresence{}
	for _, l := range labels {
		switch {
		case len(present[l]) == 0:
			p.Dropped = append(p.Dropped, fmt.Sprintf("%d (%s)", l, clip.Name(names[l])))
		case len(missing[l]) > 0:
			return nil, fmt.Errorf("bench: cwru: class %d (%s): %s missing from %s (the other files of the class are present; remove its rows from the file map to leave the class out)",
				l, clip.Name(names[l]), pathList(missing[l]), dir)
		default:
			p.Files = append(p.Files, present[l]...)
		}
	}
	return p, nil
}

// LoadCWRU reads the recordings of the file map files from dir, each at
// least window samples long. A class none of whose files is present is
// dropped (listed in Dropped); a class with only some of its files present
// is an error naming the missing ones, since a class missing from a domain
// would silently change the problem. Every file must hold its variable as a
// numeric vector of finite values of at least window samples; errors name
// the file. Files are read in parallel.
//
// The classes kept are those of PresentCWRUFiles.
func LoadCWRU(dir string, files []CWRUFile, window int) (*CWRU, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("bench: cwru: empty file map")
	}
	c := &CWRU{Dir: dir}
	present, err := PresentCWRUFiles(dir, files)
	if err != nil {
		return nil, err
	}
	c.Dropped = present.Dropped
	c.Domains = CWRUFileDomains(files)
	for _, f := range present.Files {
		if !slices.Contains(c.Labels, f.Label) {
			c.Labels = append(c.Labels, f.Label)
			c.Names = append(c.Names, f.Class)
		}
	}
	if len(c.Labels) < 2 {
		return nil, fmt.Errorf("bench: cwru: %d classes with recordings in %s (want at least 2); is it the CWRU data folder?", len(c.Labels), dir)
	}
	c.rec = make([][][]recording, len(c.Domains))
	for d := range c.rec {
		c.rec[d] = make([][]recording, len(c.Labels))
	}
	type job struct {
		f    CWRUFile
		d, k int
	}
	var jobs []job
	for k, l := range c.Labels {
		for _, f := range present.Files {
			if f.Label == l {
				jobs = append(jobs, job{f, slices.Index(c.Domains, f.Domain), k})
			}
		}
	}
	out := make([]recording, len(jobs))
	err = par.Run(len(jobs), 4, func(i int) error {
		path := filepath.Join(dir, filepath.FromSlash(jobs[i].f.Path))
		x, v, err := signal.ReadChannel(path, jobs[i].f.Variable, "DE")
		if err == nil && len(x) < window {
			err = fmt.Errorf("%s: variable %s has %d samples, fewer than a window of %d", path, clip.Name(v), len(x), window)
		}
		if err != nil {
			return fmt.Errorf("bench: cwru: %w", err)
		}
		out[i] = recording{path: path, x: x}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		c.rec[j.d][j.k] = append(c.rec[j.d][j.k], out[i])
	}
	for d, dom := range c.Domains {
		for k, l := range c.Labels {
			if len(c.rec[d][k]) == 0 {
				return nil, fmt.Errorf("bench: cwru: class %d (%s) has no file for domain %s in the file map", l, clip.Name(c.Names[k]), clip.Name(dom))
			}
		}
	}
	return c, nil
}
