// Package untar is the one reader of untrusted tar archives: a code pack
// fetched from the store (package codepack) and an image's file system
// (package images). Its rules, checked on each header before anything of
// the entry is read or written:
//
//   - a name is a clean relative path (no "." or ".." segment; with
//     Limits.Rooted, once "./" or "/" is taken off its start), of at most
//     Limits.MaxName bytes and Limits.MaxDepth segments;
//   - at most Limits.MaxEntries entries and Limits.MaxBytes bytes of files;
//   - only folders, regular files and (when allowed) symbolic links; a
//     link is resolved as the file system would, every component in turn
//     through the archive's other links (Resolve), and refused when it
//     lands outside the folder; no entry is below a link, and links are
//     made last, so nothing is written through one;
//   - the context is checked for each entry and each read of a file's
//     bytes, so a cancelled extraction stops at once;
//   - after the end of the archive at most Limits.MaxTrailer bytes are
//     read (Reader.Trailer): a pack followed by gigabytes is refused, not
//     hashed to the end.
//
// It is pure of the store: it reads an io.Reader and writes below a folder.
package untar
