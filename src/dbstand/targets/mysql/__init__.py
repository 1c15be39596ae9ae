"""mysql"""
