// The acceptance spec file (accept/spec.hpp): load_spec() of any file returns a Spec or throws
// AcceptError whose line names the file; a Spec it returns passes validate() and survives
// spec_to_json -> spec_from_json unchanged.
//
// The input is the file (fuzz::as_file).
#include <string>

#include "fabench/accept/error.hpp"
#include "fabench/accept/spec.hpp"
#include "fuzz_common.hpp"

using namespace fabench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::as_file(data, size);
  accept::Spec s;
  try {
    s = accept::load_spec(path);
  } catch (const accept::AcceptError& e) {
    const std::string_view what = e.what();
    FUZZ_CHECK(what.starts_with(path + ": ") || what.starts_with(path + ":"));
    FUZZ_CHECK(what.find('\n') == std::string_view::npos);
    return 0;
  }
  accept::validate(s, "fuzz");  // must not throw for what load_spec accepted
  FUZZ_CHECK(accept::spec_from_json(accept::spec_to_json(s), "round trip") == s);
  return 0;
}
