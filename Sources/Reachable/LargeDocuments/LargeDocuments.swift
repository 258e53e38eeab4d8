/// What a fleet's multi-megabyte documents need from the machine, in one place: a job of many
/// items shared by two threads (`LargeDocuments+Parts`), and memory given back and kept the way a
/// long-running service wants it (`LargeDocuments+Memory`). Domain code calls these and says no
/// more; what each bought is measured in the benchmark and listed in docs/scale.md, not in the
/// code that calls it. (One more piece is C: curl and c-ares allocate from mimalloc,
/// `CProbeLibraries/loader.c`.)
package enum LargeDocuments {}
