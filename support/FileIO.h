// FileIO: how tk reads an input file and writes an output, for every tool
// (tkc, tkc run, tkc --aot, tkc-opt) and the C++ API's compile-from-file, so
// that a hostile path ends in a message and never in an abort or a silent
// success.
//
//   std::string text, error;
//   if (!readInputFile("k.tk", text, error))
//     ... error: "'k.tk' is a directory, not a source file", "'/dev/zero' is
//         larger than 16 MiB (the limit on an input file)", "cannot read
//         'x.tk': No such file or directory"
//   if (!writeOutput("out.ptx", ptx, error))     // "" or "-": standard output
//     ... error: "cannot write 'out.ptx': No space left on device"
//
// An input is read in chunks up to the limit, so a file that never ends
// (/dev/zero, /dev/urandom) or one too large for memory is refused after
// kMaxInputBytes bytes instead of growing a string until it aborts. Pipes
// and terminals are read as files are (`tkc -`, `tkc <(gen)`); a directory is
// refused by name. A write is checked through the flush and the close, where
// a full disk shows (`-o /dev/full`, `> /dev/full`).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tk {

/// The largest input file tk reads: 16 MiB, some 500 times the largest file
/// the project reads (tutorials/04-matmul.tk, tests of a few KiB, .tkir
/// dumps of tens of KiB). The front end's memory grows with the text, about
/// 70 times its size: a 16 MiB kernel of a million statements takes 1.1 GB
/// and 1.6 s to parse and check (measured 2026-12-01, tkc --emit=summary).
constexpr size_t kMaxInputBytes = size_t(16) << 20;

/// Reads all of `path` ("-": standard input) into `text`; false with
/// `error` naming the file and the reason when it cannot be opened, is a
/// directory, fails to read, or holds more than `maxBytes`.
bool readInputFile(const std::string &path, std::string &text, std::string &error,
                   size_t maxBytes = kMaxInputBytes);

/// Writes `data` to `path` ("" or "-": standard output, flushed), replacing
/// the file; false with `error` naming it and the system's reason when the
/// open, a write, the flush or the close fails.
bool writeOutput(const std::string &path, std::string_view data, std::string &error);

} // namespace tk
