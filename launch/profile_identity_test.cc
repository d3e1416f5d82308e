//===- launch/profile_identity_test.cc - the profile a compile reads --------===//
#include "mlgo/launch/profile_identity.h"
#include "mlgo/launch/tuning_table.h"
#include "sha256.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace mlgo::launch {
namespace {

namespace fs = std::filesystem;

ProfileFiles filesOf(std::vector<std::string> args) {
  return profileFiles(args);
}

TEST(ProfileIdentityTest, ReadsTheProfileFlagsAsTheDriverDoes) {
  EXPECT_FALSE(filesOf({"-O2", "-c", "a.c"}).any());
  EXPECT_EQ(filesOf({"-fprofile-instr-use=p.profdata"}).instrumented, "p.profdata");
  EXPECT_EQ(filesOf({"-fprofile-use=/no/such/p.profdata"}).instrumented, "/no/such/p.profdata");
  EXPECT_EQ(filesOf({"-fprofile-use"}).instrumented, "default.profdata");
  EXPECT_EQ(filesOf({"-fprofile-instr-use"}).instrumented, "default.profdata");
  EXPECT_EQ(filesOf({"-Xclang", "-fprofile-instrument-use-path=q"}).instrumented, "q");
  // the last of a family wins; -fno-... turns it off
  EXPECT_EQ(filesOf({"-fprofile-use=a", "-fprofile-instr-use=b"}).instrumented, "b");
  EXPECT_FALSE(filesOf({"-fprofile-use=a", "-fno-profile-use"}).any());
  EXPECT_FALSE(filesOf({"-fprofile-instr-use=a", "-fno-profile-instr-use"}).any());
  EXPECT_EQ(filesOf({"-fno-profile-use", "-fprofile-use=a"}).instrumented, "a");
  EXPECT_EQ(filesOf({"-fprofile-sample-use=s.prof"}).sample, "s.prof");
  EXPECT_EQ(filesOf({"-fauto-profile=s.prof"}).sample, "s.prof");
  EXPECT_FALSE(filesOf({"-fprofile-sample-use=s", "-fno-profile-sample-use"}).any());
  EXPECT_FALSE(filesOf({"-fauto-profile=s", "-fno-auto-profile"}).any());
  ProfileFiles both = filesOf({"-fprofile-use=a", "-fprofile-sample-use=s"});
  EXPECT_EQ(both.instrumented, "a");
  EXPECT_EQ(both.sample, "s");
  EXPECT_EQ(both.describe(), "'a' and 's'");
  EXPECT_EQ(filesOf({}).describe(), "no profile");
}

class ProfileFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-profile-test-");
    ASSERT_TRUE(dir.ok()) << dir.error().message();
    dir_.emplace(std::move(*dir));
  }
  std::string write(const std::string& name, const std::string& text) {
    fs::path path = dir_->path() / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  support::CleanupScope scope_;
  std::optional<support::TempDir> dir_;
};

TEST_F(ProfileFilesTest, ADirectoryGivenToProfileUseMeansItsDefaultProfdata) {
  write("d/default.profdata", "abc");
  std::string dir = (dir_->path() / "d").string();
  EXPECT_EQ(filesOf({"-fprofile-use=" + dir}).instrumented, dir + "/default.profdata");
}

TEST_F(ProfileFilesTest, TheIdentityIsTheSha256OfTheContent) {
  ProfileFiles none;
  auto empty = profileIdentity(none);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  ProfileFiles one{write("a.profdata", "abc"), ""};
  auto digest = profileIdentity(one);
  ASSERT_TRUE(digest.ok()) << digest.error().message();
  EXPECT_EQ(*digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ProfileFiles sample{"", one.instrumented};
  EXPECT_EQ(*profileIdentity(sample), *digest); // the content, whichever kind
  // the same path with other content is another identity
  write("a.profdata", "abd");
  EXPECT_NE(*profileIdentity(one), *digest);
  write("a.profdata", "abc");
  // both kinds: SHA-256 of the two digests, the instrumentation profile's first
  ProfileFiles both{one.instrumented, write("s.prof", "xyz\n")};
  EXPECT_EQ(*profileIdentity(both),
            "4821aae845298030bb6de5aa1efbab741fc49303810bc16bab2e47462e7e0cb0");
  EXPECT_EQ(describeProfile(*digest), "profile ba7816bf8f01");
  EXPECT_EQ(describeProfile(""), "no profile");
}

TEST_F(ProfileFilesTest, AProfileThatCannotBeReadIsAnErrorNamingIt) {
  std::string missing = (dir_->path() / "gone.profdata").string();
  auto read = profileIdentity(ProfileFiles{missing, ""});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(read.error().message().find("the profile '" + missing + "' cannot be read"),
            std::string::npos)
      << read.error().message();
}

TEST(Sha256Test, TheCpuExtensionsGiveThePortableDigest) {
  // Every tail length around the one- and two-block padding, and a long buffer.
  std::vector<uint8_t> bytes(1 << 20);
  uint32_t x = 12345;
  for (uint8_t& b : bytes) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  for (size_t n = 0; n <= 200; ++n)
    EXPECT_EQ(sha256(std::span(bytes.data(), n)), sha256Portable(std::span(bytes.data(), n)))
        << n;
  EXPECT_EQ(sha256(bytes), sha256Portable(bytes));
  std::string abc = "abc";
  auto digest = sha256(std::span(reinterpret_cast<const uint8_t*>(abc.data()), abc.size()));
  EXPECT_EQ(digest[0], 0xba);
  EXPECT_EQ(digest[31], 0xad);
  std::printf("sha256: the CPU's SHA extensions %s\n",
              sha256UsesCpuExtensions() ? "used" : "absent (portable code only)");
}

const std::string kFirst = "0123456789abcdef" + std::string(48, 'a');

std::string entryWith(const std::string& profileField) {
  return R"({"format": "mlgo-env-tuning-entries", "version": 1, "entries": [)"
         R"({"module": "a.o", "opt": "-O2", "decisions": 1, "actions": "AQ==", "first": ")" +
         kFirst + R"(", "stream": ")" + std::string(64, 'b') +
         R"(", "default_score": 2, "tuned_score": 1)" + profileField + "}]}";
}

TEST(TuningTableProfileTest, EntriesCarryTheProfileTheyWereTunedWith) {
  auto absent = parseEntries(entryWith(""), "0123456789abcdef", "k.json");
  ASSERT_TRUE(absent.ok()) << absent.error().message();
  EXPECT_EQ(absent->front().profile, ""); // older tables: no profile
  std::string digest(64, 'c');
  auto with = parseEntries(entryWith(R"(, "profile": ")" + digest + "\""), "0123456789abcdef",
                           "k.json");
  ASSERT_TRUE(with.ok()) << with.error().message();
  EXPECT_EQ(with->front().profile, digest);
  for (const std::string& bad : std::vector<std::string>{
           R"(, "profile": "xyz")", R"(, "profile": 3)",
           R"(, "profile": ")" + std::string(64, 'C') + "\""}) {
    auto refused = parseEntries(entryWith(bad), "0123456789abcdef", "DIR/k.json");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().message(),
              "tuning file 'DIR/k.json': entry 'a.o': profile must be \"\" or a SHA-256 in hex");
  }
}

std::string manifestWith(const std::string& profilesField) {
  return R"({"format": "mlgo-env-tuning", "version": 1, "problem": "regalloc",
    "features": ["a"], "clang": {"path": "/c", "size": 1, "mtime_ns": 2,
    "version": "clang 22"}, "modules": 1)" +
         profilesField + "}";
}

TEST(TuningTableProfileTest, TheManifestListsTheEntriesProfiles) {
  auto older = parseManifest(manifestWith(""), "tuning.json");
  ASSERT_TRUE(older.ok()) << older.error().message();
  EXPECT_FALSE(older->profiles.has_value()); // unknown: the entries tell
  std::string c(64, 'c'), d(64, 'd');
  auto listed =
      parseManifest(manifestWith(R"(, "profiles": ["", ")" + c + R"(", ")" + d + "\"]"), "t");
  ASSERT_TRUE(listed.ok()) << listed.error().message();
  EXPECT_EQ(*listed->profiles, (std::vector<std::string>{"", c, d}));
  struct Case {
    std::string field, message;
  } cases[] = {
      {R"(, "profiles": "")", "'profiles' must be a list"},
      {R"(, "profiles": ["x"])", "'profiles' must hold \"\" or SHA-256 digests in hex"},
      {R"(, "profiles": [")" + d + R"(", ")" + c + "\"]", "'profiles' must be sorted and distinct"},
      {R"(, "profiles": [")" + c + R"(", ")" + c + "\"]", "'profiles' must be sorted and distinct"},
  };
  for (const auto& k : cases) {
    auto refused = parseManifest(manifestWith(k.field), "DIR/tuning.json");
    ASSERT_FALSE(refused.ok()) << k.field;
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(refused.error().message(), "tuning file 'DIR/tuning.json': " + k.message);
  }
}

} // namespace
} // namespace mlgo::launch
