"""mongodb"""
