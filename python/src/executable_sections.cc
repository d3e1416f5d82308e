//===- python/src/executable_sections.cc - code bytes of objects in _core --===//
#include "executable_sections.h"

#include "mlgo/corpus/executable_sections.h"

#include <string>

namespace py = pybind11;

namespace mlgo::python {
namespace {

constexpr const char* kDoc =
    "executable_sections(path: str) -> list[tuple[str, bytes]]\n\n"
    "The executable sections (ELF: SHF_EXECINSTR) of the object file, executable or shared "
    "library at `path`, as (name, contents) in the file's section order. Raises "
    "FileNotFoundError when there is no such file, OSError when it cannot be read, ValueError "
    "when it is not an object file or is cut short; each names the file. Reads the file; "
    "releases the GIL meanwhile.";

[[noreturn]] void raiseFor(const Error& error) {
  PyObject* type = error.code() == ErrorCode::kNotFound ? PyExc_FileNotFoundError
                   : error.code() == ErrorCode::kIo     ? PyExc_OSError
                                                        : PyExc_ValueError;
  PyErr_SetString(type, error.message().c_str());
  throw py::error_already_set();
}

py::list executableSections(const std::string& path) {
  Result<std::vector<corpus::ExecutableSection>> sections =
      makeError(ErrorCode::kInternal, "not read");
  {
    py::gil_scoped_release release;
    sections = corpus::readExecutableSections(path);
  }
  if (!sections.ok())
    raiseFor(sections.error());
  py::list out;
  for (const corpus::ExecutableSection& s : *sections)
    out.append(py::make_tuple(s.name, py::bytes(s.contents)));
  return out;
}

} // namespace

void bindExecutableSections(py::module_& m) {
  m.def("executable_sections", &executableSections, py::arg("path"), kDoc);
}

} // namespace mlgo::python
