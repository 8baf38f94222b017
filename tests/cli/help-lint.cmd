help lint
