#include "driver/Lld.h"

#include "driver/Ptxas.h"

#include <fmt/format.h>

#include <vector>

namespace tk {

std::string findLld(std::string &searched) {
  std::vector<std::string> candidates = {"/usr/lib/llvm-19/bin/ld.lld"};
  for (const char *name : {"ld.lld-19", "ld.lld"})
    for (std::string &c : onPath(name))
      candidates.push_back(std::move(c));
  return firstExecutable(candidates, searched);
}

bool linkCodeObject(const std::string &object, std::string &codeObject, std::string &error) {
  std::string searched;
  std::string lld = findLld(searched);
  if (lld.empty()) {
    error = fmt::format("ld.lld not found: install lld-19 (scripts/setup.sh installs it) "
                        "(looked at: {})",
                        searched);
    return false;
  }
  std::string messages;
  return runOnFile({lld, "-shared", "{in}", "-o", "{out}"}, object, "kernel.o", "kernel.hsaco",
                   codeObject, messages, error);
}

} // namespace tk
