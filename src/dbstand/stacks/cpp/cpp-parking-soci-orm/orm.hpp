// A small ORM layer over SOCI's object mapping: statements are generated from the
// mapping metadata (mapping.hpp), rows travel as whole objects through
// soci::into(obj) / soci::use(obj), an update writes the whole row back by primary
// key, and a locking read is SELECT ... FOR UPDATE.
#pragma once

#include <soci/soci.h>

#include <map>
#include <optional>
#include <string>
#include <typeindex>
#include <vector>

#include "db.hpp"
#include "mapping.hpp"

namespace parking::orm {

class Mapper {
public:
    Mapper(soci::session& session, const Dialect& dialect) : s_(session), d_(dialect) {}

    // The first row of T matching `where` (placeholders bound in order to `params`).
    template <class T, class... P>
    std::optional<T> first(const std::string& where, bool lock, const P&... params) {
        T row;
        soci::indicator ind = soci::i_ok;
        soci::details::prepare_temp_type q = s_.prepare << sql<T>().select + " WHERE " + where +
                                                               d_.lock(lock);
        q, soci::into(row, ind);
        ((q, soci::use(params)), ...);
        soci::statement st(q);
        if (!st.execute(true)) return std::nullopt;
        return row;
    }

    // Every row of T matching `where`.
    template <class T, class... P>
    std::vector<T> all(const std::string& where, bool lock, const P&... params) {
        soci::details::prepare_temp_type q = s_.prepare << sql<T>().select + " WHERE " + where +
                                                               d_.lock(lock);
        ((q, soci::use(params)), ...);
        soci::rowset<T> rows(q);
        return std::vector<T>(rows.begin(), rows.end());
    }

    // A row by primary key; a missing row is an error (a broken foreign key).
    template <class T>
    T get(Id id, bool lock) {
        auto row = first<T>("id = :id", lock, id);
        if (!row) throw std::runtime_error(std::string("no ") + Table<T>::key + " with id " +
                                           std::to_string(id));
        return *row;
    }

    // count(*) of T's rows matching `where`.
    template <class T, class... P>
    long long count(const std::string& where, const P&... params) {
        long long n = 0;
        soci::details::prepare_temp_type q =
            s_.prepare << "SELECT count(*) FROM " + d_.table(Table<T>::key) + " WHERE " + where;
        q, soci::into(n);
        ((q, soci::use(params)), ...);
        soci::statement st(q);
        st.execute(true);
        return n;
    }

    // INSERT of every column but the key; the new key is set on `row`.
    template <class T>
    void insert(T& row) {
        const Sql& text = sql<T>();
        const T& values = row;  // bound read-only: SOCI converts a non-const object back
        long long id = 0;
        if (d_.postgresql) {
            s_ << text.insert + " RETURNING id", soci::use(values), soci::into(id);
        } else {
            s_ << text.insert, soci::use(values);
            id = d_.last_insert_id(s_, d_.table(Table<T>::key));
        }
        row.id = id;
    }

    // UPDATE of the whole row by primary key.
    template <class T>
    void update(const T& row) {
        s_ << sql<T>().update, soci::use(row);
    }

private:
    struct Sql {
        std::string select, insert, update;
    };

    template <class T>
    const Sql& sql() {
        auto it = cache_.find(typeid(T));
        if (it != cache_.end()) return it->second;
        const std::string table = d_.table(Table<T>::key);
        std::string cols, names, params, sets;
        for (const Column& c : Table<T>::columns()) {
            std::string name = c.name;
            cols += (cols.empty() ? "" : ", ") +
                    (c.kind == Kind::Money ? d_.money_text(name) : name);
            if (name == "id") continue;
            names += (names.empty() ? "" : ", ") + name;
            params += (params.empty() ? ":" : ", :") + name;
            sets += (sets.empty() ? "" : ", ") + name + " = :" + name;
        }
        Sql out{"SELECT " + cols + " FROM " + table,
                "INSERT INTO " + table + " (" + names + ") VALUES (" + params + ")",
                "UPDATE " + table + " SET " + sets + " WHERE id = :id"};
        return cache_.emplace(typeid(T), std::move(out)).first->second;
    }

    soci::session& s_;
    const Dialect& d_;
    std::map<std::type_index, Sql> cache_;
};

}  // namespace parking::orm
