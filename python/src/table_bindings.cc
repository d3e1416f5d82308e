//===- python/src/table_bindings.cc - tuning tables in _core ----------------===//
#include "table_bindings.h"

#include "mlgo/table/stream_identity.h"
#include "mlgo/table/table_writer.h"
#include "mlgo/table/tuning_table.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <string>
#include <vector>

namespace py = pybind11;

namespace mlgo::python {
namespace {

using table::TuningEntry;

[[noreturn]] void raiseFor(const Error& error) {
  PyErr_SetString(error.code() == ErrorCode::kIo ? PyExc_OSError : PyExc_ValueError,
                  error.message().c_str());
  throw py::error_already_set();
}

template <typename T> T valid(Result<T> result) {
  if (!result.ok())
    raiseFor(result.error());
  return std::move(*result);
}

/// An entry's priorities as Python holds them: the entry's JSON form,
/// {"questions": N, "functions": {name: {"step": multiplier}}}; None for none.
py::object prioritiesObject(const std::optional<table::EntryPriorities>& priorities) {
  if (!priorities)
    return py::none();
  py::dict functions;
  for (const auto& [name, steps] : priorities->multipliers) {
    py::dict bySteps;
    for (const auto& [step, multiplier] : steps)
      bySteps[py::str(std::to_string(step))] = multiplier;
    functions[py::str(name)] = bySteps;
  }
  py::dict out;
  out["questions"] = priorities->questions;
  out["functions"] = functions;
  return out;
}

/// The inverse of prioritiesObject(); ValueError naming the module when the
/// object is not of that form (the writer checks the multipliers).
std::optional<table::EntryPriorities> prioritiesOf(const py::handle& value,
                                                   const std::string& module) {
  if (value.is_none())
    return std::nullopt;
  auto fail = [&](const std::string& what) -> py::value_error {
    return py::value_error("entry '" + module + "': priorities: " + what);
  };
  if (!py::isinstance<py::dict>(value))
    throw fail("not a dict");
  auto dict = py::reinterpret_borrow<py::dict>(value);
  if (!dict.contains("questions") || !dict.contains("functions") ||
      !py::isinstance<py::dict>(dict["functions"]))
    throw fail("needs 'questions' and 'functions' (a dict)");
  table::EntryPriorities out;
  py::handle questions = dict["questions"];
  if (!py::isinstance<py::int_>(questions) || py::isinstance<py::bool_>(questions) ||
      questions.cast<py::int_>() < py::int_(0))
    throw fail("'questions' must be a count");
  out.questions = questions.cast<uint64_t>();
  for (auto [name, steps] : py::reinterpret_borrow<py::dict>(dict["functions"])) {
    if (!py::isinstance<py::str>(name))
      throw fail("a function name is not a str");
    std::string function = name.cast<std::string>();
    if (!py::isinstance<py::dict>(steps))
      throw fail("function '" + function + "' is not a dict of steps");
    auto& kept = out.multipliers[function];
    for (auto [step, multiplier] : py::reinterpret_borrow<py::dict>(steps)) {
      std::string text = py::str(step).cast<std::string>();
      auto index = table::priorityStep(text);
      if (!py::isinstance<py::str>(step) || !index)
        throw fail("function '" + function + "': step '" + text + "' is not an index");
      if (!(py::isinstance<py::float_>(multiplier) || py::isinstance<py::int_>(multiplier)) ||
          py::isinstance<py::bool_>(multiplier))
        throw fail("function '" + function + "': step " + text + ": the multiplier is not a "
                   "number");
      kept[*index] = multiplier.cast<double>();
    }
  }
  return out;
}

py::tuple entryTuple(const TuningEntry& e) {
  py::object sites = py::none();
  if (!e.sites.empty())
    sites =
        py::bytes(reinterpret_cast<const char*>(e.sites.data()), e.sites.size() * sizeof(uint64_t));
  return py::make_tuple(
      e.module, py::bytes(reinterpret_cast<const char*>(e.actions.data()), e.actions.size()),
      e.first, e.stream, e.defaultScore, e.tunedScore, e.opt, e.profile, sites,
      prioritiesObject(e.priorities));
}

TuningEntry entryOf(const py::tuple& t) {
  if (t.size() != 10)
    throw py::value_error("an entry is a tuple of 10 fields");
  TuningEntry e;
  e.module = t[0].cast<std::string>();
  for (py::handle a : t[1]) {
    auto action = a.cast<int64_t>();
    if (action < 0 || action > 255)
      throw py::value_error(e.module + ": an action outside 0..255");
    e.actions.push_back(static_cast<uint8_t>(action));
  }
  e.first = t[2].cast<std::string>();
  e.stream = t[3].cast<std::string>();
  e.defaultScore = t[4].cast<double>();
  e.tunedScore = t[5].cast<double>();
  e.opt = t[6].cast<std::string>();
  e.profile = t[7].cast<std::string>();
  if (!t[8].is_none()) {
    auto sites = t[8].cast<std::string>();
    if (sites.size() != e.actions.size() * sizeof(uint64_t))
      throw py::value_error("entry '" + e.module + "': sites holds " +
                            std::to_string(sites.size()) + " bytes, not 8 per decision");
    e.sites.resize(e.actions.size());
    std::memcpy(e.sites.data(), sites.data(), sites.size());
  }
  e.priorities = prioritiesOf(t[9], e.module);
  return e;
}

py::dict manifestDict(const table::TuningManifest& m) {
  py::dict clang;
  clang["path"] = m.compiler.path;
  clang["size"] = m.compiler.size;
  clang["mtime_ns"] = m.compiler.mtimeNs;
  clang["version"] = m.compiler.version;
  py::dict out;
  out["format"] = std::string(table::kManifestFormat);
  out["version"] = table::kVersion;
  out["problem"] = m.problem;
  out["features"] = m.features;
  out["clang"] = clang;
  out["modules"] = m.modules;
  if (m.profiles)
    out["profiles"] = *m.profiles;
  return out;
}

size_t writeTable(const std::string& dir, const std::string& problem,
                  const std::vector<std::string>& features, const py::dict& clang,
                  const py::list& entries) {
  table::TableContents c{problem, features, {}, {}};
  for (const char* key : {"path", "size", "mtime_ns", "version"})
    if (!clang.contains(key))
      throw py::value_error(std::string("'clang' has no '") + key + "'");
  c.compiler = {clang["path"].cast<std::string>(), clang["size"].cast<uint64_t>(),
                clang["mtime_ns"].cast<int64_t>(), clang["version"].cast<std::string>()};
  for (py::handle e : entries)
    c.entries.push_back(entryOf(e.cast<py::tuple>()));
  Result<size_t> written = makeError(ErrorCode::kInternal, "not written");
  {
    py::gil_scoped_release release;
    written = table::writeTable(dir, std::move(c));
  }
  return valid(std::move(written));
}

py::dict readManifest(const std::string& dir) {
  Result<table::TuningTable> opened = makeError(ErrorCode::kInternal, "not read");
  {
    py::gil_scoped_release release;
    opened = table::TuningTable::open(dir);
  }
  if (!opened.ok())
    throw py::value_error(opened.error().message());
  return manifestDict(opened->manifest());
}

py::list readEntries(const std::string& dir) {
  Result<std::vector<TuningEntry>> read = makeError(ErrorCode::kInternal, "not read");
  {
    py::gil_scoped_release release;
    read = table::readEntries(dir);
  }
  if (!read.ok())
    throw py::value_error(read.error().message());
  py::list out;
  for (const TuningEntry& e : *read)
    out.append(entryTuple(e));
  return out;
}

py::tuple parseEntry(const std::string& text, const std::string& where) {
  auto entry = table::parseEntry(text, where);
  if (!entry.ok())
    throw py::value_error(entry.error().message());
  return entryTuple(*entry);
}

/// The observation's tensors for `features`, in order: contiguous
/// little-endian arrays (kept alive by `arrays`) and views of their bytes.
std::vector<std::span<const std::byte>> tensorsOf(const py::handle& obs,
                                                  const std::vector<std::string>& features,
                                                  std::vector<py::array>& arrays) {
  auto mapping = py::reinterpret_borrow<py::object>(obs);
  std::vector<std::span<const std::byte>> views;
  for (const std::string& name : features) {
    if (!mapping.contains(name))
      throw py::key_error("the observation has no feature '" + name + "'");
    py::array a = py::array::ensure(mapping[py::str(name)], py::array::c_style);
    if (!a)
      throw py::type_error("the observation's feature '" + name + "' is not an array");
    if (a.dtype().attr("byteorder").cast<std::string>() == ">")
      a = a.attr("astype")(a.dtype().attr("newbyteorder")("<"));
    arrays.push_back(a);
    views.emplace_back(static_cast<const std::byte*>(a.data()), static_cast<size_t>(a.nbytes()));
  }
  return views;
}

py::bytes identityDigest(const py::handle& obs, const std::vector<std::string>& features) {
  std::vector<py::array> arrays;
  std::vector<uint8_t> scratch;
  table::Sha256Digest digest = table::identityDigest(tensorsOf(obs, features, arrays), scratch);
  return py::bytes(reinterpret_cast<const char*>(digest.data()), digest.size());
}

py::bytes siteKey(const py::handle& obs, const std::vector<std::string>& features) {
  std::vector<py::array> arrays;
  std::vector<uint8_t> scratch;
  uint64_t key = table::siteKey(tensorsOf(obs, features, arrays), scratch);
  return py::bytes(reinterpret_cast<const char*>(&key), sizeof key);
}

std::string streamHex(const std::vector<std::string>& digests) {
  std::vector<table::Sha256Digest> all(digests.size());
  for (size_t i = 0; i < digests.size(); ++i) {
    if (digests[i].size() != sizeof(table::Sha256Digest))
      throw py::value_error("a digest is not 32 bytes");
    std::memcpy(all[i].data(), digests[i].data(), digests[i].size());
  }
  return table::streamHex(all);
}

} // namespace

void bindTable(py::module_& m) {
  auto t = m.def_submodule("table", "the tuning table (mlgo/table/): reader, writer, identities");
  t.def("write_table", &writeTable, py::arg("directory"), py::arg("problem"), py::arg("features"),
        py::arg("clang"), py::arg("entries"),
        "Writes the table (table_writer.h) from entry tuples; the number of entries. "
        "ValueError for what the reader would refuse (nothing written), OSError naming a file "
        "that cannot be written.");
  t.def("read_manifest", &readManifest, py::arg("directory"),
        "DIR/tuning.json as a dict, checked; ValueError naming the file.");
  t.def("read_entries", &readEntries, py::arg("directory"),
        "Every entry of DIR/modules/ as tuples, files in name order; ValueError naming the "
        "first bad file.");
  t.def(
      "entry_text", [](const py::tuple& e) { return valid(table::entryText(entryOf(e))); },
      py::arg("entry"), "An entry tuple as its JSON object text; ValueError if refused.");
  t.def("parse_entry", &parseEntry, py::arg("text"), py::arg("where"),
        "An entry's JSON object text as a tuple, checked; ValueError prefixed with `where`.");
  t.def(
      "is_digest", [](const std::string& s) { return table::isDigest(s); }, py::arg("text"));
  t.def(
      "entry_key", [](const std::string& s) { return table::entryKey(s); }, py::arg("first"));
  t.def(
      "identity_features",
      [](const std::vector<std::string>& names) { return table::identityFeatures(names); },
      py::arg("names"), "The identity features among `names`: sorted, no embeddings.");
  t.def(
      "site_features",
      [](const std::vector<std::string>& features) { return table::siteFeatures(features); },
      py::arg("features"), "`features` without those a site key leaves out (kNotSiteFeatures).");
  t.def("identity_digest", &identityDigest, py::arg("observation"), py::arg("features"),
        "The SHA-256 (32 bytes) of the observation's `features`' bytes, in order.");
  t.def("site_key", &siteKey, py::arg("observation"), py::arg("features"),
        "The site key (8 bytes) over `features` (site_features of the table's).");
  t.def("stream_hex", &streamHex, py::arg("digests"),
        "The stream identity (hex) of observations with these 32-byte digests.");
}

} // namespace mlgo::python
