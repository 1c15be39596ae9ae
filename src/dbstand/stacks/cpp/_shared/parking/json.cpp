#include "json.hpp"

#include <cstdio>

namespace parking::json {

std::string quote(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (unsigned char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
    return out;
}

Object& Object::str(const std::string& key, const std::string& value) {
    items_.emplace_back(key, quote(value));
    return *this;
}

Object& Object::integer(const std::string& key, std::int64_t value) {
    items_.emplace_back(key, std::to_string(value));
    return *this;
}

Object& Object::object(const std::string& key, const Object& value) {
    items_.emplace_back(key, value.dump());
    return *this;
}

bool Object::has(const std::string& key) const {
    for (const auto& item : items_)
        if (item.first == key) return true;
    return false;
}

std::string Object::dump() const {
    std::string out = "{";
    bool first = true;
    for (const auto& [key, value] : items_) {
        if (!first) out += ", ";
        first = false;
        out += quote(key);
        out += ": ";
        out += value;
    }
    out += '}';
    return out;
}

namespace {

class Reader {
public:
    explicit Reader(const std::string& s) : s_(s) {}

    void blanks() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' ||
                                  s_[i_] == '\r'))
            ++i_;
    }
    bool eat(char c) {
        blanks();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    bool at_end() {
        blanks();
        return i_ == s_.size();
    }

    std::optional<std::string> string() {
        blanks();
        if (i_ >= s_.size() || s_[i_] != '"') return std::nullopt;
        ++i_;
        std::string out;
        while (i_ < s_.size()) {
            unsigned char c = static_cast<unsigned char>(s_[i_++]);
            if (c == '"') return out;
            if (c < 0x20) return std::nullopt;
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (i_ >= s_.size()) return std::nullopt;
            char e = s_[i_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    auto cp = hex4();
                    if (!cp) return std::nullopt;
                    unsigned long code = *cp;
                    if (code >= 0xD800 && code < 0xDC00 && i_ + 1 < s_.size() &&
                        s_[i_] == '\\' && s_[i_ + 1] == 'u') {
                        std::size_t save = i_;
                        i_ += 2;
                        auto low = hex4();
                        if (low && *low >= 0xDC00 && *low < 0xE000)
                            code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
                        else
                            i_ = save;
                    }
                    utf8(out, code);
                    break;
                }
                default:
                    return std::nullopt;
            }
        }
        return std::nullopt;
    }

private:
    std::optional<unsigned long> hex4() {
        if (i_ + 4 > s_.size()) return std::nullopt;
        unsigned long v = 0;
        for (int k = 0; k < 4; ++k) {
            char h = s_[i_++];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= h - '0';
            else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
            else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
            else return std::nullopt;
        }
        return v;
    }
    static void utf8(std::string& out, unsigned long cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    const std::string& s_;
    std::size_t i_ = 0;
};

}  // namespace

std::optional<std::map<std::string, std::string>> parse_string_object(const std::string& text) {
    Reader r(text);
    std::map<std::string, std::string> out;
    if (!r.eat('{')) return std::nullopt;
    if (!r.eat('}')) {
        do {
            auto key = r.string();
            if (!key || !r.eat(':')) return std::nullopt;
            auto value = r.string();
            if (!value) return std::nullopt;  // not a string (or malformed): refused alike
            out[*key] = *value;
        } while (r.eat(','));
        if (!r.eat('}')) return std::nullopt;
    }
    if (!r.at_end()) return std::nullopt;
    return out;
}

}  // namespace parking::json
