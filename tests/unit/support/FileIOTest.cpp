// support/FileIO.h: inputs that are not source files are refused by name,
// within the size limit; failed writes are reported.
#include "support/FileIO.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tk;

namespace {

std::filesystem::path scratch(const char *name) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tk-fileio-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

TEST(FileIO, ReadsARegularFileWhole) {
  std::filesystem::path p = scratch("k.tk");
  std::ofstream(p, std::ios::binary) << std::string("a\0b\n", 4);
  std::string text, error;
  ASSERT_TRUE(readInputFile(p.string(), text, error)) << error;
  EXPECT_EQ(text, std::string("a\0b\n", 4));
  // At the limit is fine; one byte past it is not, and the text is dropped.
  ASSERT_TRUE(readInputFile(p.string(), text, error, 4)) << error;
  EXPECT_FALSE(readInputFile(p.string(), text, error, 3));
  EXPECT_EQ(error, "'" + p.string() + "' is larger than 3 bytes (the limit on an input file)");
  EXPECT_TRUE(text.empty());
}

TEST(FileIO, RefusesWhatIsNoSourceFile) {
  std::string text, error;
  EXPECT_FALSE(readInputFile(scratch("").string(), text, error));
  EXPECT_NE(error.find("is a directory, not a source file"), std::string::npos) << error;
  EXPECT_FALSE(readInputFile(scratch("missing.tk").string(), text, error));
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
  // A device that never ends is read one byte past the limit, then refused.
  EXPECT_FALSE(readInputFile("/dev/zero", text, error, 1 << 20));
  EXPECT_EQ(error, "'/dev/zero' is larger than 1 MiB (the limit on an input file)");
  EXPECT_FALSE(readInputFile("/dev/zero", text, error));
  EXPECT_EQ(error, "'/dev/zero' is larger than 16 MiB (the limit on an input file)");
}

TEST(FileIO, ReportsFailedWrites) {
  std::string error;
  std::filesystem::path p = scratch("out.txt");
  ASSERT_TRUE(writeOutput(p.string(), "ptx", error)) << error;
  std::ifstream in(p);
  std::string back((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(back, "ptx");
  EXPECT_FALSE(writeOutput("/dev/full", "ptx", error));
  EXPECT_EQ(error, "cannot write '/dev/full': No space left on device");
  EXPECT_FALSE(writeOutput(scratch("").string(), "ptx", error));
  EXPECT_NE(error.find("Is a directory"), std::string::npos) << error;
  std::filesystem::remove_all(scratch("").parent_path());
}

} // namespace
