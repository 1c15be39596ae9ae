"""postgresql"""
