// Package matfile reads the numeric variables of MATLAB level-5 MAT-files,
// the format MATLAB writes with save -v6 and save -v7 (the default before
// R2006b and the usual format of published data sets).
//
// # Format support
//
// A level-5 MAT-file is a 128-byte header followed by data elements. The
// header holds 116 bytes of descriptive text, an 8-byte subsystem data
// offset, a 2-byte version (0x0100) and a 2-byte endian indicator: "IM" for
// little-endian files and "MI" for big-endian ones. Both byte orders are
// supported. Each data element has an 8-byte tag, a data type and a byte
// count, followed by the data padded to a multiple of 8 bytes; elements of
// at most 4 bytes may instead use the small data element format, which
// packs the byte count into the upper 16 bits of the type field and the
// data into the second half of the tag. A top-level element is either an
// miMATRIX, which holds one variable, or an miCOMPRESSED element, a zlib
// stream holding one miMATRIX element (save -v7 compresses every
// variable this way).
//
// An miMATRIX element holds the array flags (the class, and the complex,
// global and logical bits), the dimensions (at least two), the name and,
// for numeric classes, the real part and the imaginary part if the array is
// complex. Numeric classes are double, single, int8 to int64, uint8 to
// uint64 and logical arrays (class uint8 with the logical bit set, reported
// as Class "logical"). MATLAB often stores data in a smaller type than the
// class, for example a double array of small integers as miUINT8; values
// are converted from the storage type, so the result is the same. Values
// are converted to float64 exactly, except that 64-bit integers whose
// magnitude exceeds 2^53 are rounded (Var.Ints converts them exactly).
// Data is stored in column-major order; Var.Matrix returns it as a
// row-major mat.Dense with the same element at the same (row, column).
//
// Variables of other classes (char, cell, struct, object, sparse,
// function_handle and opaque objects such as string or table) do not make
// a file unreadable: they are listed in File.Vars with their name, class
// and, where the format records them, their dimensions, and the accessors
// return an error that names the class, for example
//
//	matfile: variable imgNames is a cell array, not a numeric array
//
// Their contents are skipped using the byte count of their element, without
// being parsed. Unnamed top-level elements, such as the subsystem data that
// MATLAB writes for objects, are skipped.
//
// # Cell arrays
//
// The cells of a cell array, each an miMATRIX element, are read by
// Var.Cells, in column-major order (MATLAB's linear indexing), one level
// deep: a cell holding a numeric array is read like a top-level variable,
// an empty cell is a 0×0 double array, and a cell holding anything else (a
// char array, a struct, another cell array, …) is listed with its class
// and its accessors return an error. Each cell is named after its variable
// with its index from 1 in braces, MATLAB's notation, which File.Lookup
// accepts:
//
//	v, err := f.Lookup("feature{3}") // the third cell of feature
//
// Cells are parsed on the first call of Cells (or Lookup of a cell), not by
// Read, so a cell array whose cells cannot be parsed is listed and only
// Cells reports the error. Multi-dimensional subscripts such as
// feature{1,3} are not accepted: use the linear index.
//
// # Compressed variables
//
// Read decompresses, of each compressed variable, only the start of its
// stream: the tag, the array flags, the dimensions, the name and, for
// numeric arrays, the tag of the real part, which is checked against the
// dimensions. That is enough to list the variable. Its data, or its cells,
// are decompressed when first used (by Matrix, Vector, Ints or Cells), and
// kept; a variable that is never used is never decompressed, whatever
// size it declares. A used variable is decompressed only as far as its
// dimensions need: the data of the real part, exactly the product of the
// dimensions times the size of its storage type, then at most 1 MiB more
// to check the end of the element and the stream's checksum. Errors in the
// data of a compressed variable (truncation, corrupt data, a wrong
// checksum) are therefore reported by the accessor that first uses it,
// prefixed like the errors of Read or Open, and again by later calls.
//
// Files saved with save -v7.3 are HDF5 files and are not supported; the
// error says so and suggests saving with -v7. Level-4 MAT-files, which
// have no 128-byte text header, are rejected as not level-5 files.
//
// # Error policy
//
// Input is untrusted: Read and Open never panic, and every byte count is
// checked against the bytes actually present, or for a compressed element
// against the byte count its enclosing element declares, before any memory
// is allocated for it. A compressed element is decompressed as its data
// arrives, so a small file that declares a huge variable fails with a
// truncation error instead of a huge allocation. Decompressed elements are
// limited by the 32-bit byte count of their tag (4 GiB). Negative
// dimensions, dimensions whose product overflows or does not match the
// data, unknown data types, storage types that cannot hold numbers,
// nested compression and truncated elements are all errors; truncation is
// reported as, for example,
//
//	matfile: x.mat: truncated: element at byte offset 128 declares 4000 bytes, 1232 remain
//
// Offsets count from the start of the file, or for elements inside a
// compressed element, from the start of its decompressed data. So that a
// small compressed element cannot make the reader allocate much, an array
// may have at most 4096 dimensions, a name at most 4096 bytes and a cell
// array at most 2^20 cells, far above what MATLAB writes. The reader
// descends into cells one level and never into structs, so nesting depth
// is bounded by construction.
//
// Errors are prefixed with "matfile: ", followed by the file path for Open
// and for lookups, cells and decompressed data of files read by Open.
// Errors from the operating system are wrapped, so errors.Is(err,
// fs.ErrNotExist) and similar tests work; a name Lookup does not find
// gives an error matching ErrNotFound.
package matfile
