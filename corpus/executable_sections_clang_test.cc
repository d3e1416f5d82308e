//===- corpus/executable_sections_clang_test.cc - against llvm-readelf ----===//
#include "mlgo/corpus/executable_sections.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iterator>
#include <sstream>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

// Code in four sections (.text stays empty with -ffunction-sections), data in .data.
constexpr std::string_view kSource = R"(
int table[4] = {1, 2, 3, 4};
int f(int x) { return table[x & 3] * x; }
int g(int x) { return f(x) + f(x + 1); }
__attribute__((section(".text.custom"))) int h(int x) { return x * 7 + 1; }
)";

/// The executable sections as llvm-readelf lists them (flag X), their bytes
/// cut from the file at the offset and size it prints.
std::vector<ExecutableSection> readelfSections(const fs::path& object, const fs::path& listing) {
  fs::path readelf = fs::path(MLGO_CLANG).parent_path() / "llvm-readelf";
  EXPECT_EQ(testing::run(readelf.string(), {"-S", "-W", object.string()}, listing.string()), 0);
  std::string bytes = testing::readFile(object);
  std::istringstream lines(testing::readFile(listing));
  std::vector<ExecutableSection> sections;
  for (std::string line; std::getline(lines, line);) {
    size_t bracket = line.find("] ");
    if (line.find("  [") != 0 || bracket == std::string::npos)
      continue;
    std::istringstream fields(line.substr(bracket + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(fields), {}};
    // name type address offset size es [flags] link info align
    if (f.size() != 10 || f[6].find('X') == std::string::npos)
      continue;
    size_t offset = std::stoul(f[3], nullptr, 16), size = std::stoul(f[4], nullptr, 16);
    sections.push_back({f[0], bytes.substr(offset, size)});
  }
  return sections;
}

TEST(ExecutableSections, AreTheSectionsLlvmReadelfFlagsExecutableInFileOrder) {
  TempDir dir;
  testing::writeFile(dir / "s.c", kSource);
  ASSERT_EQ(testing::run(MLGO_CLANG, {"-O2", "-ffunction-sections", "-c", (dir / "s.c").string(),
                                      "-o", (dir / "s.o").string()}),
            0);
  auto sections = readExecutableSections(dir / "s.o");
  ASSERT_TRUE(sections.ok()) << sections.error().message();
  auto expected = readelfSections(dir / "s.o", dir / "readelf.txt");
  ASSERT_EQ(expected.size(), 4u); // .text, .text.f, .text.g, .text.custom
  EXPECT_EQ(*sections, expected);
  EXPECT_EQ(expected[3].name, ".text.custom");
  EXPECT_FALSE(expected[1].contents.empty());
}

TEST(ExecutableSections, RefusalsNameTheFile) {
  TempDir dir;
  auto missing = readExecutableSections(dir / "missing.o");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr((dir / "missing.o").string()));

  testing::writeFile(dir / "text.o", "not an object file\n");
  auto text = readExecutableSections(dir / "text.o");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), ErrorCode::kParse);
  EXPECT_THAT(text.error().message(), HasSubstr((dir / "text.o").string() + " is not an object"));

  // A real object cut short: its section header table lies past the end.
  testing::writeFile(dir / "s.c", kSource);
  ASSERT_EQ(testing::run(MLGO_CLANG, {"-O2", "-c", (dir / "s.c").string(), "-o",
                                      (dir / "s.o").string()}),
            0);
  testing::writeFile(dir / "cut.o", testing::readFile(dir / "s.o").substr(0, 200));
  auto cut = readExecutableSections(dir / "cut.o");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code(), ErrorCode::kParse);
  EXPECT_THAT(cut.error().message(), HasSubstr((dir / "cut.o").string()));
}

} // namespace
} // namespace mlgo::corpus
