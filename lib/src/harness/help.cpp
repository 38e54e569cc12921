// fabench's --help layout (harness/cli.hpp): every line within 100 columns,
// a flag's value shown as a short placeholder (N, NUM, VALUE or the name an
// option gives) instead of CLI11's type strings ("UINT:INT from 1 to 255"),
// and groups that only --help-all shows.
#include <algorithm>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "fabench/harness/cli.hpp"

namespace fabench::harness {

namespace {

constexpr std::size_t kNameColumn = 26;  // where descriptions start

// Words of `text` filled into lines of at most `width` characters (a longer
// word gets a line of its own); explicit newlines are kept.
std::vector<std::string> fill(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  auto flush = [&] {
    lines.push_back(line);
    line.clear();
  };
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \n", i), text.size());
    const std::string_view word = text.substr(i, end - i);
    if (!word.empty()) {
      if (!line.empty() && line.size() + 1 + word.size() > width) flush();
      if (!line.empty()) line += ' ';
      line += word;
    }
    if (end < text.size() && text[end] == '\n') flush();
    i = end + 1;
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

// The placeholder of an option's value: the name it was given (->type_name("SPEC")),
// else one from CLI11's type: N for whole numbers, NUM for other numbers, VALUE for text.
std::string placeholder(const CLI::Option* opt) {
  std::string type = opt->get_type_name();
  type = type.substr(0, type.find(':'));
  if (type.empty()) return {};
  if (type == "UINT" || type == "INT") return "N";
  if (type == "FLOAT") return "NUM";
  if (type == "TEXT") return "VALUE";
  return type;
}

class HelpFormatter : public CLI::Formatter {
 public:
  void hide_group(std::string group) { more_.insert(std::move(group)); }
  void show_all(bool all) { all_ = all; }
  [[nodiscard]] bool has_more() const { return !more_.empty(); }

  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override {
    if (!all_ && more_.count(group) != 0) return {};
    return CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return {};  // a flag
    const std::string p = placeholder(opt);
    return p.empty() ? p : " " + p;
  }

  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    return is_positional ? opt->get_name(true, false) : CLI::Formatter::make_option_name(opt, is_positional);
  }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    const std::string name =
        "  " + make_option_name(opt, is_positional) + (is_positional ? "" : make_option_opts(opt));
    const auto desc = fill(make_option_desc(opt), kHelpColumns - kNameColumn);
    std::ostringstream out;
    out << name;
    std::size_t at = name.size();
    if (at + 1 >= kNameColumn) {  // the description starts on the next line
      out << '\n';
      at = 0;
    }
    for (const auto& line : desc) {
      if (line.empty()) continue;
      out << std::string(kNameColumn - at, ' ') << line << '\n';
      at = 0;
    }
    if (desc.empty() || (desc.size() == 1 && desc[0].empty())) out << '\n';
    return out.str();
  }

  // The footer's own lines are kept (tables, indented lists); only one that
  // passes the column limit is filled.
  std::string make_footer(const CLI::App* app) const override {
    const std::string footer = app->get_footer();
    if (footer.empty()) return {};
    std::string out = "\n";
    std::size_t start = 0;
    while (start <= footer.size()) {
      const std::size_t end = std::min(footer.find('\n', start), footer.size());
      const std::string_view line = std::string_view(footer).substr(start, end - start);
      if (line.size() <= kHelpColumns) {
        out.append(line).push_back('\n');
      } else {
        for (const auto& part : fill(line, kHelpColumns)) out += part + '\n';
      }
      start = end + 1;
    }
    return out;
  }

  std::string make_description(const CLI::App* app) const override {
    if (app->get_description().empty()) return {};
    std::string out;
    for (const auto& line : fill(app->get_description(), kHelpColumns)) out += line + '\n';
    return out;
  }

 private:
  std::set<std::string> more_;
  bool all_ = false;
};

}  // namespace

namespace detail {

std::shared_ptr<HelpFormatter> help_formatter(CLI::App& app) {
  if (auto mine = std::dynamic_pointer_cast<HelpFormatter>(app.get_formatter())) return mine;
  auto f = std::make_shared<HelpFormatter>();
  app.formatter(f);
  return f;
}

}  // namespace detail

void use_help_layout(CLI::App& app) { static_cast<void>(detail::help_formatter(app)); }

void help_all_only(CLI::App& app, std::string group) { detail::help_formatter(app)->hide_group(std::move(group)); }

std::string help_text(CLI::App& app, bool all) {
  auto f = detail::help_formatter(app);
  f->show_all(all);
  std::string text = app.help();
  f->show_all(false);
  // A group --help leaves out still leaves the blank line CLI11 puts after each group.
  for (auto at = text.find("\n\n\n"); at != std::string::npos; at = text.find("\n\n\n")) text.erase(at, 1);
  return text;
}

}  // namespace fabench::harness
