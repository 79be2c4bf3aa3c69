package signal

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/matfile"

	"github.com/dadil/dadil/internal/linalg"
)

// ReadMAT returns the samples of the numeric vector variable named variable
// in the MATLAB level-5 file at path (a column or a row, as the CWRU files
// store their channels). If variable is empty, the variable is found by
// CWRUVariable with the drive-end channel "DE". It is an error if the file
// cannot be read, the variable is missing, is not a numeric vector, is empty
// or holds NaN or infinite values; errors name the file and the variable.
func ReadMAT(path, variable string) ([]float64, error) {
	x, _, err := ReadChannel(path, variable, "DE")
	return x, err
}

// ReadChannel is ReadMAT with channel (such as "FE" or "BA") in place of
// "DE" when variable is empty; it also returns the name of the variable
// it read. The file is read once.
func ReadChannel(path, variable, channel string) ([]float64, string, error) {
	f, err := matfile.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("signal: %w", err)
	}
	if variable == "" {
		variable, err = CWRUVariable(path, channel, f)
		if err != nil {
			return nil, "", err
		}
	}
	v, err := f.Lookup(variable)
	if err != nil {
		return nil, "", fmt.Errorf("signal: %s: %w", path, err)
	}
	x, err := v.Vector()
	if err != nil {
		return nil, "", fmt.Errorf("signal: %s: variable %s: %w", path, clip.Name(variable), err)
	}
	if len(x) == 0 {
		return nil, "", fmt.Errorf("signal: %s: variable %s is empty", path, clip.Name(variable))
	}
	if i := linalg.FirstNonFinite(x); i >= 0 {
		return nil, "", fmt.Errorf("signal: %s: variable %s: sample %d (counting from 1) is %v", path, clip.Name(variable), i+1, x[i])
	}
	return x, variable, nil
}

// CWRUVariable returns the name of the variable holding channel (such as
// "DE" for the drive end, "FE" for the fan end, "BA" for the base) in a file
// of the Case Western Reserve University bearing data: for a file named
// <id>.mat, "X" followed by the id padded to three digits, "_", the channel
// and "_time" (X097_DE_time in 97.mat). Files not named by their record id
// must hold exactly one variable whose name ends in "_<channel>_time". f may
// be nil if the file is named by its id.
func CWRUVariable(path, channel string, f *matfile.File) (string, error) {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if id, err := strconv.Atoi(base); err == nil && id >= 0 {
		return fmt.Sprintf("X%03d_%s_time", id, channel), nil
	}
	if f == nil {
		var err error
		if f, err = matfile.Open(path); err != nil {
			return "", fmt.Errorf("signal: %w", err)
		}
	}
	suffix := "_" + channel + "_time"
	var found []string
	for _, v := range f.Vars {
		if strings.HasSuffix(v.Name, suffix) {
			found = append(found, v.Name)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("signal: %s: no variable ending in %s (name the variable explicitly)", path, clip.Quote(suffix))
	default:
		return "", fmt.Errorf("signal: %s: several variables end in %s (%s): name the one to use", path, clip.Quote(suffix), clip.List(found, 12))
	}
}
