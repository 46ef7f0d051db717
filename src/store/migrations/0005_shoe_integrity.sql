-- The shoe-integrity checks' verdict on each finished shoe (JSON, `integrity::shoe::Verdict`),
-- written once after the shoe's last row; NULL until then. Derived data: the log decides.
ALTER TABLE shoes ADD COLUMN integrity TEXT;
