//===- src/launch_fmt.cc - fmt's compiled part, inside mlgo-env-launch ------===//
///
/// \file
/// mlgo-env-launch runs once per compiler call of a build, so it is linked
/// statically (src/CMakeLists.txt): no shared library to map and relocate at
/// each start. fmt's Debian package ships its compiled part only as
/// libfmt.so; this file is that part, built from fmt's own format-inl.h as
/// libfmt is, with the two instantiations for `char` that formatting numbers
/// needs (the library's source instantiates them the same way).
///
//===----------------------------------------------------------------------===//
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
} // namespace detail
FMT_END_NAMESPACE
