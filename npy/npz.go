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

	"github.com/dadil/dadil/internal/clip"
)

// npzTime returns the modification time recorded for every member written
// by WriteNPZ, so that equal inputs give byte-identical archives. It is the
// earliest time the zip format can represent.
func npzTime() time.Time {
	return time.Date(1980, time.January, 1, 0, 0, 0, 0, time.UTC)
}

// MaxArrayBytes bounds the arrays read from archive members by ReadNPZ,
// NPZ.Array and ReadZipMember: a member whose header declares an array of
// more than MaxArrayBytes bytes once converted to float64 (8 bytes an
// element, whatever its dtype) is refused after its header is read,
// before any of its data is decompressed. A member's size is otherwise
// only bounded by what it declares (see ReadZipMember), and a deflated
// member can declare about a thousand times the size of the archive; the
// default, 8 GiB (2^30 elements), is far above the data sets dadil reads
// and bounds what any archive can make a reader allocate. Set it before
// reading, not while reads run.
var MaxArrayBytes int64 = 8 << 30

// NPZ is an open .npz archive: a zip archive whose members are .npy
// files, as written by numpy.savez and numpy.savez_compressed, stored or
// deflate-compressed. OpenNPZ reads only the archive's directory; Array
// reads one member when asked, so an archive's unused members are never
// decompressed.
type NPZ struct {
	path    string
	zr      *zip.ReadCloser
	names   []string
	members map[string]*zip.File
}

// OpenNPZ opens the .npz archive at path and reads its directory. Array
// names are the member names with any ".npy" suffix removed, as numpy.load
// does; no two members may have the same name. The archive must be closed
// with Close. Errors are prefixed with "npy: " and the path.
func OpenNPZ(path string) (*NPZ, error) {
	zr, err := zip.OpenReader(path)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Member names are only used as array names, never as file
		// paths, so names that would be unsafe to extract are fine.
		if errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("npy: %s: not a readable .npz archive (truncated, or not a ZIP file): %w", path, err)
		}
		return nil, fileError(path, err)
	}
	z := &NPZ{path: path, zr: zr, members: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := z.members[key]; dup {
			zr.Close()
			return nil, fmt.Errorf("npy: %s: member %s: duplicate array name %s", path, clip.Quote(f.Name), clip.Quote(key))
		}
		z.members[key] = f
		z.names = append(z.names, key)
	}
	return z, nil
}

// Names returns the names of the archive's arrays, in archive order.
func (z *NPZ) Names() []string {
	return slices.Clone(z.names)
}

// Array reads the array called name (see OpenNPZ), decompressing its
// member only. Its header is read first: a member whose header declares
// more data than the member holds, or than MaxArrayBytes allows, is
// refused before its data is read; see ReadZipMember. Errors are prefixed
// with "npy: " and the path, and name the member.
func (z *NPZ) Array(name string) (*Array, error) {
	f, ok := z.members[name]
	if !ok {
		avail := "the archive is empty"
		if len(z.names) > 0 {
			avail = "arrays: " + clip.List(z.names, 12)
		}
		return nil, fmt.Errorf("npy: %s: no array %s (%s)", z.path, clip.Quote(name), avail)
	}
	a, err := readZipMember(f)
	if err != nil {
		return nil, fmt.Errorf("npy: %s: member %s: %w", z.path, clip.Quote(f.Name), err)
	}
	return a, nil
}

// Close closes the archive.
func (z *NPZ) Close() error {
	return z.zr.Close()
}

// ReadNPZ reads every array of the .npz archive at path (see OpenNPZ and
// NPZ.Array). The returned map is keyed by array name. Errors are prefixed
// with "npy: " and the path, and name the member at fault.
//
// Memory use is proportional to the uncompressed size of the members,
// which for deflated members can be far larger than the archive, up to
// MaxArrayBytes a member: to read only some arrays, use OpenNPZ.
func ReadNPZ(path string) (map[string]*Array, error) {
	z, err := OpenNPZ(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	arrays := make(map[string]*Array, len(z.names))
	for _, name := range z.names {
		if arrays[name], err = z.Array(name); err != nil {
			return nil, err
		}
	}
	return arrays, nil
}

// ReadZipMember reads one .npy member of a zip archive (such as a member
// of a .npz file, or of any archive that holds .npy members), streaming it.
// The header is read first; the data it declares (the product of the
// shape times the dtype's size), plus the header, must be the member's
// uncompressed size recorded in the archive, and at most MaxArrayBytes
// once converted to float64, or the member is refused before its data is
// decompressed. The data is then read up to exactly that size, with memory
// allocated as it arrives. Errors are prefixed with "npy: ".
func ReadZipMember(f *zip.File) (*Array, error) {
	a, err := readZipMember(f)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// Header is what the header of a .npy file declares: the shape and dtype
// of its array.
type Header struct {
	// Shape holds the length of each dimension, as Array.Shape.
	Shape []int

	// DType is the descr of the header, as Array.DType.
	DType string
}

// ReadZipHeader reads the header of one .npy member of a zip archive, and
// decompresses no more of the member than the header. It checks the
// header as ReadZipMember does, against the member's recorded size and
// MaxArrayBytes, so that a caller can check the shapes of several members
// before reading the data of any. Errors are prefixed with "npy: ".
func ReadZipHeader(f *zip.File) (*Header, error) {
	rc, src, err := openMember(f)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer rc.Close()
	h, _, err := readCheckedHeader(src)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return &Header{Shape: h.shape, DType: h.dtype.descr}, nil
}

// readZipMember is ReadZipMember without the prefix.
func readZipMember(f *zip.File) (*Array, error) {
	rc, src, err := openMember(f)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readArray(src)
}

// openMember opens member f for reading.
func openMember(f *zip.File) (io.ReadCloser, source, error) {
	rc, err := f.Open()
	if err != nil {
		if errors.Is(err, zip.ErrAlgorithm) {
			return nil, source{}, fmt.Errorf("unsupported compression method %d (want stored or deflate)", f.Method)
		}
		return nil, source{}, err
	}
	// archive/zip fails reads that go past the recorded uncompressed size
	// or end before it, so the size is exact if reading succeeds. It is
	// still attacker-controlled, so it is not used to preallocate.
	size := int64(-1)
	if f.UncompressedSize64 <= math.MaxInt64 {
		size = int64(f.UncompressedSize64)
	}
	return rc, source{r: rc, size: size, noun: "member", limit: MaxArrayBytes}, nil
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
			return fmt.Errorf("npy: %s: array name %s would be a member path outside the archive's folder (absolute, \"..\", a backslash or NUL)", path, clip.Quote(name))
		}
		if err := a.check(); err != nil {
			return fmt.Errorf("npy: %s: array %s: %w", path, clip.Quote(name), err)
		}
		hdr, err := prepare(a.Shape, a.Data)
		if err != nil {
			return fmt.Errorf("npy: %s: array %s: %w", path, clip.Quote(name), err)
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
				return fmt.Errorf("array %s: %w", clip.Quote(name), err)
			}
			if err := writeNPY(fw, headers[name], arrays[name].Data); err != nil {
				return fmt.Errorf("array %s: %w", clip.Quote(name), err)
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
