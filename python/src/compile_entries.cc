//===- python/src/compile_entries.cc - compile_commands.json in _core -----===//
#include "compile_entries.h"

#include "mlgo/corpus/compile_entry.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace mlgo::python {
namespace {

constexpr const char* kDoc =
    "module_compiles(json: str, source: str) -> list[dict]\n\n"
    "Every object the compile_commands.json text `json` names, in database order (entries "
    "writing no object left out), as dicts: module (named as `mlgo-env corpus build` and "
    "`corpus extract` name it), object (absolute), directory (where the command runs), "
    "arguments (the compile of that one source: no -o, no dependency-file flags, no other "
    "source; response files expanded), duplicate (an earlier entry wrote the same object or "
    "name: not a module of the corpus). Handles `command` or `arguments`, @files, no -o, "
    "-ofile, several sources per -c, objects outside the directory. Raises ValueError naming "
    "`source` for a malformed database. Reads response files; releases the GIL meanwhile.";

py::list moduleCompiles(const std::string& json, const std::string& source) {
  Result<std::vector<corpus::ModuleCompile>> compiles =
      makeError(ErrorCode::kInternal, "not parsed");
  {
    py::gil_scoped_release release;
    compiles = corpus::moduleCompiles(json, source);
  }
  if (!compiles.ok())
    throw py::value_error(compiles.error().message());
  py::list out;
  for (const corpus::ModuleCompile& c : *compiles) {
    py::dict d;
    d["module"] = c.module;
    d["object"] = c.object.string();
    d["directory"] = c.directory.string();
    d["arguments"] = c.arguments;
    d["duplicate"] = c.duplicate;
    out.append(std::move(d));
  }
  return out;
}

} // namespace

void bindCompileEntries(py::module_& m) {
  m.def("module_compiles", &moduleCompiles, py::arg("json"), py::arg("source"), kDoc);
}

} // namespace mlgo::python
