module github.com/gable/gable-go

go 1.19
