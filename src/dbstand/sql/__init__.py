"""SQL shared by every SQL stack: dialects, placeholders, object ownership."""
