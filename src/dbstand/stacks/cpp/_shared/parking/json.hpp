// The little JSON the service needs: an ordered object writer for answers (Python's
// json.dumps layout, ", " and ": ") and a strict reader for service_descr, which must
// be an object whose values are all strings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace parking::json {

std::string quote(const std::string& text);  // a JSON string literal (UTF-8 kept)

// An object under construction: keys in insertion order, values as JSON text.
class Object {
public:
    Object& str(const std::string& key, const std::string& value);
    Object& integer(const std::string& key, std::int64_t value);
    Object& object(const std::string& key, const Object& value);
    bool has(const std::string& key) const;
    std::string dump() const;

private:
    std::vector<std::pair<std::string, std::string>> items_;
};

// service_descr: nullopt when it is not JSON or not an object of strings.
// A repeated key keeps its last value.
std::optional<std::map<std::string, std::string>> parse_string_object(const std::string& text);

}  // namespace parking::json
