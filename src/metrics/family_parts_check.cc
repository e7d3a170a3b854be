#include "metrics/family_parts_check.h"

#include <set>

namespace strata::metrics::testing {

std::string FamilyPartsMismatch(const std::vector<std::string>& families, const Collector& render) {
  Registry whole;
  whole.AddCollector(families, [&render](const FamilySelection&, std::string& out) {
    render(FamilySelection(), out);
  });
  std::string parts;
  for (const std::string& family : families) {
    const FamilySelection only(std::set<std::string, std::less<>>{family});
    std::string alone;
    render(only, alone);
    if (alone.find("# TYPE " + family + " ") == std::string::npos) {
      return family + " alone renders no TYPE line for it:\n" + alone;
    }
    const std::string cut = whole.RenderText(only);
    if (alone != cut) {
      return family + " alone:\n" + alone + "differs from its part of the whole:\n" + cut;
    }
    parts += alone;
  }
  const std::string page = whole.RenderText();
  if (parts != page) {
    return "the parts in the order listed:\n" + parts + "differ from the whole:\n" + page;
  }
  return "";
}

}  // namespace strata::metrics::testing
