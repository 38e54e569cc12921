// The KV model config loader (kv/model.hpp): load_hf_config() of any file
// returns a ModelShape or throws KvError, nothing else. validate() (which
// every KvSpec consumer calls) accepts a shape or throws KvError; one it
// accepts has positive sizes, an MLA latent as wide as its two parts, and
// bytes_per_token() equal to the product the header documents, computed
// here in 128 bits: not one that wrapped around 2^64.
//
// The input is the file (fuzz::as_file).
#include <string>

#include "fabench/kv/error.hpp"
#include "fabench/kv/model.hpp"
#include "fuzz_common.hpp"

using namespace fabench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::as_file(data, size);
  kv::ModelShape m;
  try {
    m = kv::load_hf_config(path);
  } catch (const kv::KvError& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with(path + ": "));
    return 0;
  }
  try {
    kv::validate(m);
  } catch (const kv::KvError& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("model "));
    return 0;
  }
  FUZZ_CHECK(!m.name.empty());
  FUZZ_CHECK(m.layers > 0 && m.kv_heads > 0 && m.head_dim > 0);
  if (m.mla) {
    FUZZ_CHECK(m.kv_heads == 1);
    FUZZ_CHECK(std::uint64_t{m.head_dim} == std::uint64_t{m.kv_lora_rank} + m.qk_rope_head_dim);
  }
  const unsigned __int128 bytes = static_cast<unsigned __int128>(m.layers) * m.kv_tensors() * m.cached_heads() *
                                  m.head_elems() * kv::dtype_bytes(m.dtype);
  FUZZ_CHECK(bytes == m.bytes_per_token());
  (void)kv::dtype_name(m.dtype);
  return 0;
}
