// Lld: an AMDGPU relocatable object -> a code object (`.hsaco`, the ELF
// shared object the HIP runtime loads) with LLVM's `ld.lld -shared`, for
// `tkc --target=amdgcn --emit=hsaco`.
//
//   std::string hsaco, error;
//   if (!linkCodeObject(object, hsaco, error))
//     ... "ld.lld not found: install lld-19 (scripts/setup.sh installs it)
//          (looked at: ...)", or ld.lld's own messages
//
// ld.lld is the first of /usr/lib/llvm-19/bin/ld.lld, then ld.lld-19 and
// ld.lld on PATH.
#pragma once

#include <string>

namespace tk {

/// The ld.lld to run, or "" with `searched` listing the places looked at.
std::string findLld(std::string &searched);

/// Links `object` with `ld.lld -shared` in a private temporary directory;
/// the code object on success, ld.lld's messages on failure.
bool linkCodeObject(const std::string &object, std::string &codeObject, std::string &error);

} // namespace tk
