-- dpsynth 0.15.0 -> 0.16.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.16.0'" to load this file. \quit
