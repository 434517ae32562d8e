// Package codepack ships a component's folder with a cluster run: the folder
// its program runs in locally is packed into a tar archive, stored once in the
// artifact store under the archive's sha256, and fetched, checked and unpacked
// as the program's working directory in the pod. The code that runs on the
// cluster is then the code in the checkout, and a step's fingerprint holds
// the folder's digest on both backends.
//
// A pack is deterministic: entries in byte order of their paths, no times,
// owners or groups, modes reduced to what git keeps (a file is 0644 or, when
// any execute bit is set, 0755; a folder 0755). Version-control folders and
// caches (SkipNames) are left out, and so are credentials (Credentials; a
// file that looks like one is refused unless IgnoreFile allows it). A link
// is kept as a link when its target stays inside the folder; a link that
// leaves it, a special file (FIFO, socket, device) or a folder over Options
// is refused with an error naming the file.
//
// In the store:
//
//	<root>/.code/<hex>.tar    the pack whose sha256 is <hex>
package codepack
