"""Test helpers shared by the integration tests: small wheels and a package index on 127.0.0.1."""
