// Package npy reads and writes NumPy .npy files and .npz archives of
// numeric arrays.
//
// # Format support
//
// A .npy file is the magic string "\x93NUMPY", a major and minor version
// byte, a little-endian header length (uint16 in version 1.0, uint32 in
// versions 2.0 and 3.0), a header and the raw array data. The header is a
// Python dict literal with the keys 'descr', 'fortran_order' and 'shape',
// in any order, padded with spaces and ended by a newline; version 3.0
// headers are UTF-8. See the NumPy documentation of numpy.lib.format (NEP
// 1).
//
// Read, ReadFile and the archive readers accept versions 1.0, 2.0 and 3.0
// and the dtypes float16, float32, float64, int8 to int64, uint8 to uint64 and
// bool ('f2', 'f4', 'f8', 'i1', 'i2', 'i4', 'i8', 'u1', 'u2', 'u4', 'u8',
// 'b1') in either byte order ('<' or '>'; '=' and '|' are taken as
// little-endian). Headers may use either quote style, put the keys in any
// order and omit the padding and the final newline, as numpy also accepts;
// unknown or duplicate keys are errors. Elements are converted to float64: exactly, except that
// 64-bit integers beyond ±2^53 are rounded. Arrays stored in Fortran
// (column-major) order are reordered, so Array.Data is always row-major.
// Arrays may have any number of dimensions. Complex, object, string,
// datetime and structured dtypes are rejected. NaN and infinite values are
// passed through unchanged: checking for them is left to the caller.
//
// Write, WriteFile, WriteMatrix and WriteVector write little-endian float64
// arrays in C order using format version 1.0 (2.0 if the header does not
// fit), with the data aligned to 64 bytes as numpy does; for a float64
// array the output is byte-identical to numpy.save. WriteNPZ writes a
// deflate-compressed archive that numpy.load reads. Every function that
// writes to a path is atomic: it writes a temporary file in the same
// directory, syncs it and renames it into place, so a failed write leaves
// no partial file behind.
//
// # Archives
//
// OpenNPZ opens a .npz archive and reads only its directory; NPZ.Array
// then reads one member, so that the members a caller does not ask for
// are never decompressed. ReadNPZ reads every member. A member is read
// header first: the data its header declares (the product of the shape
// times the dtype's size), plus the header, must equal the uncompressed
// size recorded in the archive's directory, and the array must fit in
// MaxArrayBytes (8 GiB as float64 by default), or the member is refused
// before its data is decompressed; the data is then decompressed up to
// exactly that size, with memory allocated as it arrives. A decompression
// bomb, a small member that declares gigabytes, thus costs what it
// declares only when it is read and consistent, and never more than
// MaxArrayBytes. ReadZipHeader reads only the header of a member, so that
// a caller can check the shapes of several members before reading any.
//
// # Error policy
//
// Input is untrusted. The readers never panic, and they validate
// everything: the magic string, the version, the header length (at most 1
// MiB), the header syntax, the presence, uniqueness and types of the keys,
// the shape (non-negative integers whose product does not overflow) and the
// length of the data, which must match the shape exactly: both truncated
// data and trailing bytes after it are errors. Memory for the data is
// allocated as the data arrives, so a small file that claims a huge shape
// fails quickly with a truncation error instead of a huge allocation.
// Boolean bytes other than 0 and 1 are rejected.
//
// Errors are prefixed with "npy: ", followed by the file path for the
// functions that take one, and for archives the member name; the message
// then names the field at fault and the problem, for example
//
//	npy: data.npy: unsupported dtype '<U10' (want a float, integer or bool type)
//	npy: x.npy: truncated data: shape (100, 5) of <f8 needs 4000 bytes, file has 1232
//
// Errors from the operating system are wrapped, so errors.Is(err,
// fs.ErrNotExist) and similar tests work.
package npy
