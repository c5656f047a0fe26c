"""Configuration (brook/config/): CONFIG GET/SET/REWRITE, config files, the parameter table."""
