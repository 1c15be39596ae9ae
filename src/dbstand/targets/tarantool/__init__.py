"""tarantool"""
