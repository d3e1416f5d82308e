//===- launch/profile_identity_test.cc - the profile a compile reads --------===//
#include "mlgo/launch/profile_identity.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/temp_dir.h"

#include <gtest/gtest.h>

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

} // namespace
} // namespace mlgo::launch
