package npy

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// npzTime returns the modification time recorded for every member written
// by WriteNPZ, so that equal inputs give byte-identical archives. It is the
// earliest time the zip format can represent.
func npzTime() time.Time {
	return time.Date(1980, time.January, 1, 0, 0, 0, 0, time.UTC)
}

// ReadNPZ reads the .npz archive at path: a zip archive whose members are
// .npy files, as written by numpy.savez and numpy.savez_compressed. Members
// may be stored or deflate-compressed.
//
// The returned map is keyed by member name with any ".npy" suffix removed,
// as numpy.load does. Every member must be a valid .npy file in a format
// Read accepts, and no two members may have the same key. Errors are
// prefixed with "npy: " and the path, and name the member at fault.
//
// Memory use is proportional to the uncompressed size of the members, which
// for deflated members can be far larger than the archive: ReadNPZ, like
// numpy.load, does not limit the compression ratio.
func ReadNPZ(path string) (map[string]*Array, error) {
	zr, err := zip.OpenReader(path)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Member names are only used as map keys, never as file
		// paths, so names that would be unsafe to extract are fine.
		if errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("npy: %s: not a readable .npz archive (truncated, or not a ZIP file): %w", path, err)
		}
		return nil, fileError(path, err)
	}
	defer zr.Close()

	arrays := make(map[string]*Array, len(zr.File))
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := arrays[key]; dup {
			return nil, fmt.Errorf("npy: %s: member %q: duplicate array name %q", path, f.Name, key)
		}
		a, err := readZipMember(f)
		if err != nil {
			return nil, fmt.Errorf("npy: %s: member %q: %w", path, f.Name, err)
		}
		arrays[key] = a
	}
	return arrays, nil
}

// ReadZipMember reads one .npy member of a zip archive (such as a member
// of a .npz file, or of any archive that holds .npy members), streaming it:
// memory is allocated as data arrives, and a header that claims more data
// than the member's recorded size is rejected before any large allocation.
// Errors are prefixed with "npy: ".
func ReadZipMember(f *zip.File) (*Array, error) {
	a, err := readZipMember(f)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// readZipMember is ReadZipMember without the prefix.
func readZipMember(f *zip.File) (*Array, error) {
	rc, err := f.Open()
	if err != nil {
		if errors.Is(err, zip.ErrAlgorithm) {
			return nil, fmt.Errorf("unsupported compression method %d (want stored or deflate)", f.Method)
		}
		return nil, err
	}
	defer rc.Close()
	// archive/zip fails reads that go past the recorded uncompressed size
	// or end before it, so the size is exact if reading succeeds. It is
	// still attacker-controlled, so it is not used to preallocate.
	size := int64(-1)
	if f.UncompressedSize64 <= math.MaxInt64 {
		size = int64(f.UncompressedSize64)
	}
	return readArray(source{r: rc, size: size, noun: "member"})
}

// WriteNPZ writes arrays to the file at path as a .npz archive that
// numpy.load can read: a zip archive with one deflate-compressed member
// "<name>.npy" per map entry, in sorted name order. Each member is written
// as Write would write it: '<f8' in C order, whatever the array's DType.
// Member modification times are fixed, so equal inputs give identical
// files.
//
// Names must be non-empty and every array must be consistent (len(Data)
// equal to the product of Shape). The write is atomic, as described for
// WriteFile. Errors are prefixed with "npy: " and the path.
func WriteNPZ(path string, arrays map[string]*Array) error {
	names := make([]string, 0, len(arrays))
	headers := make(map[string][]byte, len(arrays))
	for name, a := range arrays {
		if name == "" {
			return fmt.Errorf("npy: %s: array name is empty", path)
		}
		if !safeName(name) {
			return fmt.Errorf("npy: %s: array name %q would be a member path outside the archive's folder (absolute, \"..\", a backslash or NUL)", path, name)
		}
		if err := a.check(); err != nil {
			return fmt.Errorf("npy: %s: array %q: %w", path, name, err)
		}
		hdr, err := prepare(a.Shape, a.Data)
		if err != nil {
			return fmt.Errorf("npy: %s: array %q: %w", path, name, err)
		}
		names = append(names, name)
		headers[name] = hdr
	}
	slices.Sort(names)

	return writeAtomic(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, name := range names {
			fw, err := zw.CreateHeader(&zip.FileHeader{
				Name:     name + ".npy",
				Method:   zip.Deflate,
				Modified: npzTime(),
			})
			if err != nil {
				return fmt.Errorf("array %q: %w", name, err)
			}
			if err := writeNPY(fw, headers[name], arrays[name].Data); err != nil {
				return fmt.Errorf("array %q: %w", name, err)
			}
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("writing zip directory: %w", err)
		}
		return nil
	})
}

// safeName reports whether name, as the member path name+".npy", stays
// inside the folder an archive is extracted to: not absolute, without ".."
// elements, backslashes or NUL bytes.
func safeName(name string) bool {
	if strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") {
		return false
	}
	return !slices.Contains(strings.Split(name, "/"), "..")
}
