package main

import (
	"context"
	"errors"
	"io"
	"reflect"
)

var ioEOF = io.EOF

// readLimited reads all of r, refusing more than max bytes.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errors.New("request body too large")
	}
	return b, nil
}

func nilContext() context.Context { return context.Background() }

func reflectNew(t reflect.Type) interface{} { return reflect.New(t).Interface() }
