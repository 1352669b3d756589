module github.com/gantryhq/gantry

go 1.26.8
