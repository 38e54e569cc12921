#include "fabench/ctrl/record.hpp"

#include <utility>

#include <fmt/format.h>

namespace fabench::ctrl {

std::string_view field_kind_name(std::size_t kind) noexcept {
  switch (kind) {
    case 0: return "f64";
    case 1: return "u64";
    case 2: return "f64 list";
    default: return "unknown kind";
  }
}

Record& Record::set(std::string_view name, FieldValue v) {
  for (auto& f : fields_) {
    if (f.name == name) {
      f.value = std::move(v);
      return *this;
    }
  }
  fields_.push_back(Field{std::string(name), std::move(v)});
  return *this;
}

const Record::Field* Record::find(std::string_view name) const noexcept {
  for (const auto& f : fields_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string Record::names() const {
  if (fields_.empty()) return "none";
  std::string out;
  for (const auto& f : fields_) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

const FieldValue& Record::get(std::string_view name, std::size_t kind) const {
  const Field* f = find(name);
  if (f == nullptr) {
    throw RecordError(fmt::format("result record has no field \"{}\" (it has: {})", name, names()));
  }
  if (f->value.index() != kind) {
    throw RecordError(fmt::format("result field \"{}\" is a {}, expected a {}", name,
                                  field_kind_name(f->value.index()), field_kind_name(kind)));
  }
  return f->value;
}

double Record::f64(std::string_view name) const { return std::get<double>(get(name, 0)); }

std::uint64_t Record::u64(std::string_view name) const { return std::get<std::uint64_t>(get(name, 1)); }

const std::vector<double>& Record::list(std::string_view name) const {
  return std::get<std::vector<double>>(get(name, 2));
}

}  // namespace fabench::ctrl
