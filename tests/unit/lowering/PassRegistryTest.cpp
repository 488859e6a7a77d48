// The pass registry (lowering/Passes.def) against the tree: docs/ir.md's pass
// table lists exactly the registered passes, each with the file that defines
// its factory, and every pass has a FileCheck test that runs it alone by its
// flag (`%tkc-opt ... --flag` with no other pass).
#include "lowering/Pass.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tk {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = TK_SOURCE_DIR;

std::string readFile(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Each pass's flag and the name of its factory, from the registry itself.
struct Registered {
  std::string flag, factory;
};
const std::vector<Registered> &registry() {
  static const std::vector<Registered> passes = {
#define TK_PASS(ID, FLAG, CREATE, SUMMARY) {FLAG, #CREATE},
#include "lowering/Passes.def"
  };
  return passes;
}

// The rows of docs/ir.md's pass table: flag -> file.
std::map<std::string, std::string> passTable(std::vector<std::string> &flagsInOrder) {
  std::string doc = readFile(kRoot / "docs" / "ir.md");
  std::map<std::string, std::string> rows;
  size_t at = doc.find("\n## Passes\n");
  if (at == std::string::npos)
    return rows;
  size_t end = doc.find("\n## ", at + 1);
  std::istringstream section(doc.substr(at, end == std::string::npos ? end : end - at));
  std::regex row(R"(^\| `--([a-z0-9-]+)` \| `([^`]+)` \|.*\|$)");
  std::string line;
  while (std::getline(section, line)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      flagsInOrder.push_back(m[1]);
      rows[m[1]] = m[2];
    }
  }
  return rows;
}

TEST(PassRegistryTest, RegistryMatchesItsTable) {
  ASSERT_EQ(registry().size(), registeredPasses().size());
  for (size_t i = 0; i < registry().size(); ++i)
    EXPECT_EQ(registry()[i].flag, registeredPasses()[i].flag);
}

TEST(PassRegistryTest, DocsListEveryPassWithItsFile) {
  std::vector<std::string> order;
  std::map<std::string, std::string> rows = passTable(order);
  ASSERT_FALSE(rows.empty()) << "docs/ir.md has no pass table under '## Passes'";
  EXPECT_EQ(order.size(), rows.size()) << "docs/ir.md lists a pass twice";
  std::set<std::string> registered;
  for (const Registered &p : registry()) {
    registered.insert(p.flag);
    auto it = rows.find(p.flag);
    if (it == rows.end()) {
      ADD_FAILURE() << "docs/ir.md's pass table lacks --" << p.flag;
      continue;
    }
    fs::path file = kRoot / it->second;
    ASSERT_TRUE(fs::exists(file)) << "docs/ir.md names " << it->second << " for --" << p.flag
                                  << ", which does not exist";
    std::regex definition("std::unique_ptr<Pass> " + p.factory + R"(\(\) \{)");
    EXPECT_TRUE(std::regex_search(readFile(file), definition))
        << it->second << " (docs/ir.md, --" << p.flag << ") does not define " << p.factory;
  }
  for (const auto &[flag, file] : rows)
    EXPECT_TRUE(registered.count(flag))
        << "docs/ir.md lists --" << flag << ", which lowering/Passes.def does not register";
}

// The pass flags of every tkc-opt command in the FileCheck tests' RUN lines
// (a pipe is two commands; a RUN line ending in '\' continues on the next).
std::vector<std::set<std::string>> tkcOptCommands() {
  std::set<std::string> flags;
  for (const Registered &p : registry())
    flags.insert(p.flag);
  std::vector<std::set<std::string>> commands;
  for (const fs::directory_entry &e :
       fs::recursive_directory_iterator(kRoot / "tests" / "filecheck")) {
    fs::path ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".tk" && ext != ".tkir"))
      continue;
    std::istringstream in(readFile(e.path()));
    std::string line, run;
    while (std::getline(in, line)) {
      size_t at = line.find("RUN:");
      if (at == std::string::npos)
        continue;
      run += line.substr(at + 4);
      if (!run.empty() && run.back() == '\\') {
        run.pop_back();
        continue;
      }
      std::istringstream pipe(run);
      std::string command;
      while (std::getline(pipe, command, '|')) {
        if (command.find("%tkc-opt") == std::string::npos)
          continue;
        std::istringstream words(command);
        std::set<std::string> passes;
        for (std::string w; words >> w;)
          if (w.starts_with("--") && flags.count(w.substr(2)))
            passes.insert(w.substr(2));
        commands.push_back(passes);
      }
      run.clear();
    }
  }
  return commands;
}

TEST(PassRegistryTest, EveryPassHasAFileCheckTestRunningItAlone) {
  std::vector<std::set<std::string>> commands = tkcOptCommands();
  ASSERT_FALSE(commands.empty()) << "no tkc-opt RUN lines under tests/filecheck";
  for (const Registered &p : registry()) {
    bool alone = false;
    for (const std::set<std::string> &c : commands)
      alone |= c.size() == 1 && *c.begin() == p.flag;
    EXPECT_TRUE(alone) << "no FileCheck test runs `%tkc-opt ... --" << p.flag
                       << "` with no other pass";
  }
}

} // namespace
} // namespace tk
