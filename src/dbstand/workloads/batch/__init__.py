"""batch"""
